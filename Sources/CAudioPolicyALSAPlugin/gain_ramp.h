/* A per-frame linear gain ramp, applied to interleaved samples while measuring their peaks. No ALSA here. */
#ifndef APA_GAIN_RAMP_H
#define APA_GAIN_RAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Internal to the plugin: it is loaded into other programs, and must not add names to them. */
#pragma GCC visibility push(hidden)

/* Where the gain is and where it is going. Double precision so that a long ramp lands on its
 * target without drift; the last frame of a ramp is set to the target exactly. */
struct apa_gain_ramp {
    double gain;         /* gain of the last frame processed */
    double step;         /* added to gain on every frame while remaining > 0 (a linear ramp) */
    double ratio;        /* or, when not 0, the gain is multiplied by it (a ramp in decibels) */
    uint64_t remaining;  /* frames left in the ramp */
    float target;
};

/* Highest |sample| seen, 1.0 = full scale, before (in) and after (out) the gain. */
struct apa_peaks {
    float in;
    float out;
};

/* A ramp at rest on `gain`. */
void apa_gain_ramp_settle(struct apa_gain_ramp *ramp, float gain);

/* Ramps linearly from the current gain to `target` over `frames` frames (at least one): every
 * frame moves the gain by the same step, the last lands on `target`. */
void apa_gain_ramp_start(struct apa_gain_ramp *ramp, float target, uint64_t frames);

/* Ramps from the current gain to `target` over `frames` frames along a straight line in decibels, as
 * the daemon's ramps go (a duck's or fade's whole course in one message): every frame multiplies the
 * gain by the same ratio, the last lands on `target`. Gains at or below `floor_db` count as the floor,
 * so a ramp from silence starts there and one to silence reaches it, then 0 on its last frame. */
void apa_gain_ramp_start_decibels(struct apa_gain_ramp *ramp, float target, uint64_t frames, float floor_db);

/* True when the ramp rests on exactly 1: samples pass bit-exact. */
bool apa_gain_ramp_is_unity(const struct apa_gain_ramp *ramp);

/* Frames for a ramp of `ms` at `rate`, at least one. */
uint64_t apa_ramp_frames(uint32_t ms, unsigned rate);

/* Applies the ramp to `frames` frames of `channels` samples each and advances it. A frame's samples
 * are consecutive; frame starts are `src_stride`/`dst_stride` samples apart (= channels when
 * interleaved; 1 with channels 1 for one channel of a non-interleaved buffer). src may equal dst.
 * Peaks are raised to what the frames hold, never lowered. */
void apa_apply_s16(struct apa_gain_ramp *ramp, const int16_t *src, size_t src_stride, int16_t *dst,
                   size_t dst_stride, unsigned channels, size_t frames, struct apa_peaks *peaks);
void apa_apply_s32(struct apa_gain_ramp *ramp, const int32_t *src, size_t src_stride, int32_t *dst,
                   size_t dst_stride, unsigned channels, size_t frames, struct apa_peaks *peaks);
void apa_apply_float(struct apa_gain_ramp *ramp, const float *src, size_t src_stride, float *dst,
                     size_t dst_stride, unsigned channels, size_t frames, struct apa_peaks *peaks);

#pragma GCC visibility pop

#endif
