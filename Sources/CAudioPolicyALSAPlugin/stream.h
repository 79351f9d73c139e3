/* One PCM stream as the daemon sees it: its introduction, state, peaks, and the gain the daemon
 * asks for. Everything the plugin does except touching ALSA; time is an input. */
#ifndef APA_STREAM_H
#define APA_STREAM_H

#include "daemon_link.h"
#include "gain_ramp.h"
#include "peak_report.h"
#include "wire.h"

#include <stdbool.h>
#include <stdint.h>

/* Internal to the plugin: it is loaded into other programs, and must not add names to them. */
#pragma GCC visibility push(hidden)

/* Commands drained per transfer at most: a flooding daemon cannot hold the audio path. */
#define APA_MAX_COMMANDS_PER_POLL 32

struct apa_stream {
    struct apa_daemon_link link;
    struct apa_hello hello;        /* encoded once, sent on every (re)connection */
    struct apa_format format;      /* encoded at hw_params */
    bool has_format;
    unsigned rate;                 /* 48000 until hw_params says */
    enum apa_stream_state state;
    uint64_t position;             /* frames since the last prepare */
    struct apa_gain_ramp ramp;     /* what the samples get */
    float gain;                    /* the daemon's gain, kept while muted */
    bool muted;
    uint32_t restore_ms;           /* ramp back to unity when the daemon goes away */
    uint32_t meter_interval_ms;
    struct apa_peak_reporter reporter;
};

/* Sets up the stream at unity and tries to connect; with no daemon the stream just plays. */
void apa_stream_open(struct apa_stream *stream, const char *socket_path, const struct apa_hello_fields *hello,
                     uint32_t restore_ms, uint64_t now_ns);

/* hw_params: reports the format and the SETUP state. */
void apa_stream_set_format(struct apa_stream *stream, unsigned rate, unsigned channels,
                           enum apa_sample_format format, uint32_t buffer_frames, uint32_t period_frames);

/* Reports a state change (PREPARED also starts the position and the peak windows afresh). */
void apa_stream_set_state(struct apa_stream *stream, enum apa_stream_state state);

/* Reconnects if due and applies the daemon's waiting commands. Call before processing samples. */
void apa_stream_poll(struct apa_stream *stream, uint64_t now_ns);

/* After processing `frames` frames with these peaks: RUNNING on the first after a prepare, and a
 * PEAK report if one is due. */
void apa_stream_account(struct apa_stream *stream, struct apa_peaks peaks, uint32_t frames, uint64_t now_ns);

/* Reports CLOSED and disconnects. */
void apa_stream_close(struct apa_stream *stream);

#pragma GCC visibility pop

#endif
