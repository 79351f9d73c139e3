/* The gain ramp and the sample loops: the only code that touches every sample. */
#include "gain_ramp.h"

#include <math.h>

void apa_gain_ramp_settle(struct apa_gain_ramp *ramp, float gain)
{
    ramp->gain = gain;
    ramp->step = 0;
    ramp->ratio = 0;
    ramp->remaining = 0;
    ramp->target = gain;
}

void apa_gain_ramp_start(struct apa_gain_ramp *ramp, float target, uint64_t frames)
{
    if (frames == 0)
        frames = 1;
    ramp->target = target;
    ramp->remaining = frames;
    ramp->step = ((double)target - ramp->gain) / (double)frames;
    ramp->ratio = 0;
}

void apa_gain_ramp_start_decibels(struct apa_gain_ramp *ramp, float target, uint64_t frames, float floor_db)
{
    if (frames == 0)
        frames = 1;
    double floor = pow(10.0, (double)floor_db / 20.0);
    double from = ramp->gain > floor ? ramp->gain : floor;
    double to = (double)target > floor ? (double)target : floor;
    ramp->target = target;
    ramp->remaining = frames;
    ramp->gain = from;
    ramp->step = 0;
    ramp->ratio = pow(to / from, 1.0 / (double)frames);
}

bool apa_gain_ramp_is_unity(const struct apa_gain_ramp *ramp)
{
    return ramp->remaining == 0 && ramp->gain == 1.0;
}

uint64_t apa_ramp_frames(uint32_t ms, unsigned rate)
{
    uint64_t frames = (uint64_t)ms * rate / 1000;
    return frames ? frames : 1;
}

/* The gain for the next frame. */
static inline double next_gain(struct apa_gain_ramp *ramp)
{
    if (ramp->remaining) {
        if (--ramp->remaining)
            ramp->gain = ramp->ratio != 0 ? ramp->gain * ramp->ratio : ramp->gain + ramp->step;
        else
            ramp->gain = ramp->target;
    }
    return ramp->gain;
}

/* Per format: the magnitude of a sample (full scale = 1) and the sample scaled by a gain in 0...1
 * (which cannot overflow, so there is no clipping to do). The integer formats round to nearest, so
 * that gain 1 gives back every sample unchanged. */
static inline float magnitude_s16(int16_t s) { return fabsf((float)s) * (1.0f / 32768.0f); }
static inline int16_t scaled_s16(int16_t s, double g) { return (int16_t)lrintf((float)s * (float)g); }
static inline float magnitude_s32(int32_t s) { return (float)(fabs((double)s) * (1.0 / 2147483648.0)); }
static inline int32_t scaled_s32(int32_t s, double g) { return (int32_t)lrint((double)s * g); }
static inline float magnitude_float(float s) { return fabsf(s); }
static inline float scaled_float(float s, double g) { return s * (float)g; }

/* One loop body for the three formats (a macro rather than three copies). At unity the samples are
 * only copied and measured once: that is the common case (no daemon, nothing ducked). */
#define APA_DEFINE_APPLY(NAME, SAMPLE)                                                                   \
    void apa_apply_##NAME(struct apa_gain_ramp *ramp, const SAMPLE *src, size_t src_stride, SAMPLE *dst, \
                          size_t dst_stride, unsigned channels, size_t frames, struct apa_peaks *peaks)  \
    {                                                                                                    \
        float peak_in = peaks->in, peak_out = peaks->out;                                                \
        if (apa_gain_ramp_is_unity(ramp)) {                                                              \
            float peak = 0;                                                                              \
            for (size_t f = 0; f < frames; f++, src += src_stride, dst += dst_stride)                    \
                for (unsigned c = 0; c < channels; c++) {                                                \
                    float m = magnitude_##NAME(src[c]);                                                  \
                    peak = m > peak ? m : peak;                                                          \
                    dst[c] = src[c];                                                                     \
                }                                                                                        \
            peak_in = peak > peak_in ? peak : peak_in;                                                   \
            peak_out = peak > peak_out ? peak : peak_out;                                                \
        } else {                                                                                         \
            for (size_t f = 0; f < frames; f++, src += src_stride, dst += dst_stride) {                  \
                double g = next_gain(ramp);                                                              \
                for (unsigned c = 0; c < channels; c++) {                                                \
                    SAMPLE s = src[c];                                                                   \
                    SAMPLE out = scaled_##NAME(s, g);                                                    \
                    float m_in = magnitude_##NAME(s), m_out = magnitude_##NAME(out);                     \
                    peak_in = m_in > peak_in ? m_in : peak_in;                                           \
                    peak_out = m_out > peak_out ? m_out : peak_out;                                      \
                    dst[c] = out;                                                                        \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
        peaks->in = peak_in;                                                                             \
        peaks->out = peak_out;                                                                           \
    }

APA_DEFINE_APPLY(s16, int16_t)
APA_DEFINE_APPLY(s32, int32_t)
APA_DEFINE_APPLY(float, float)
