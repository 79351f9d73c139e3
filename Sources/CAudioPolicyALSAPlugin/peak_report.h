/* When the plugin tells the daemon about peaks: often enough to judge audible from silent, rarely
 * enough to cost nothing. Pure: time is an input. */
#ifndef APA_PEAK_REPORT_H
#define APA_PEAK_REPORT_H

#include "gain_ramp.h"
#include "audiopolicy_alsa_protocol.h"

#include <stdbool.h>
#include <stdint.h>

/* Internal to the plugin: it is loaded into other programs, and must not add names to them. */
#pragma GCC visibility push(hidden)

/* The default levels of the daemon's AudibilityDetector (the policy's [audibility], Sources/AudioPolicy/
 * Audibility): a span that crosses from one side of both to the other is worth reporting at once. They
 * pace only the default mode's reports; the daemon meters with an interval and judges by its policy. */
#define APA_AUDIBLE_ABOVE 0.00316f /* -50 dBFS */
#define APA_SILENT_BELOW 0.001f    /* -60 dBFS */

/* Default mode: one window per 100 ms of audio; a report when the level changes sides, on the
 * first window after a prepare, and at least every 500 ms of wall time while audio flows (so the
 * daemon's 400 ms hangover can end, and a stream whose reports stop has stopped); never two within
 * 100 ms of wall time. */
#define APA_DEFAULT_WINDOW_MS 100u
#define APA_MIN_REPORT_GAP_NS 100000000ull
#define APA_KEEPALIVE_NS 500000000ull

enum apa_level { APA_LEVEL_UNKNOWN, APA_LEVEL_SILENT, APA_LEVEL_AUDIBLE };

struct apa_peak_reporter {
    unsigned rate;
    uint32_t interval_ms;     /* 0: default mode; APA_METER_OFF: no reports; else the daemon's METER interval */
    uint32_t window_frames;
    uint64_t min_gap_ns;
    uint32_t window_filled;   /* frames in the current window */
    float window_in;          /* peak of the current window (input): decides the level */
    struct apa_peaks pending; /* peaks of every frame since the last report */
    uint32_t pending_frames;
    bool due;                 /* a reason to report came up and waits for the gap */
    enum apa_level last_level;
    uint64_t last_report_ns;
};

/* A span of audio to report. */
struct apa_peak_span {
    struct apa_peaks peaks;
    uint32_t frames;
};

void apa_peak_reporter_init(struct apa_peak_reporter *reporter, unsigned rate, uint32_t interval_ms);

/* Back to the first-window state (after a prepare): the next window is reported whatever its level. */
void apa_peak_reporter_restart(struct apa_peak_reporter *reporter);

/* Makes the next window's report due whatever its level (the daemon's QUERY). */
void apa_peak_reporter_request(struct apa_peak_reporter *reporter);

/* Adds a chunk of `frames` frames with these peaks, at wall time `now_ns`. True, with the span to
 * send in *span, when a report is due now; the span then starts afresh. */
bool apa_peak_reporter_add(struct apa_peak_reporter *reporter, struct apa_peaks peaks, uint32_t frames,
                           uint64_t now_ns, struct apa_peak_span *span);

#pragma GCC visibility pop

#endif
