/* Peak reporting: windows of audio frames decide whether the level changed; wall time limits how
 * often a report goes out (during the burst that fills the buffer at start, windows of audio pass
 * much faster than real time). */
#include "peak_report.h"

void apa_peak_reporter_init(struct apa_peak_reporter *reporter, unsigned rate, uint32_t interval_ms)
{
    *reporter = (struct apa_peak_reporter){.rate = rate ? rate : 48000, .interval_ms = interval_ms};
    uint32_t window_ms = interval_ms && interval_ms != APA_METER_OFF ? interval_ms : APA_DEFAULT_WINDOW_MS;
    reporter->window_frames = (uint32_t)((uint64_t)reporter->rate * window_ms / 1000);
    if (reporter->window_frames == 0)
        reporter->window_frames = 1;
    /* A metered daemon asked for one report per interval: allow some jitter between chunks. */
    reporter->min_gap_ns = interval_ms && interval_ms != APA_METER_OFF ? (uint64_t)interval_ms * 750000u
                                                                       : APA_MIN_REPORT_GAP_NS;
    apa_peak_reporter_restart(reporter);
}

void apa_peak_reporter_restart(struct apa_peak_reporter *reporter)
{
    reporter->window_filled = 0;
    reporter->window_in = 0;
    reporter->pending = (struct apa_peaks){0};
    reporter->pending_frames = 0;
    reporter->due = false;
    reporter->last_level = APA_LEVEL_UNKNOWN;
}

void apa_peak_reporter_request(struct apa_peak_reporter *reporter)
{
    reporter->last_level = APA_LEVEL_UNKNOWN;
}

/* The level a window's peak says, or the previous one for a peak between the thresholds. */
static enum apa_level level_of(float peak, enum apa_level previous)
{
    if (peak > APA_AUDIBLE_ABOVE)
        return APA_LEVEL_AUDIBLE;
    if (peak < APA_SILENT_BELOW)
        return APA_LEVEL_SILENT;
    return previous == APA_LEVEL_UNKNOWN ? APA_LEVEL_AUDIBLE : previous;
}

bool apa_peak_reporter_add(struct apa_peak_reporter *reporter, struct apa_peaks peaks, uint32_t frames,
                           uint64_t now_ns, struct apa_peak_span *span)
{
    /* Nobody measures this stream: nothing to add up, nothing to send. */
    if (reporter->interval_ms == APA_METER_OFF)
        return false;
    if (peaks.in > reporter->pending.in)
        reporter->pending.in = peaks.in;
    if (peaks.out > reporter->pending.out)
        reporter->pending.out = peaks.out;
    reporter->pending_frames += frames;
    if (peaks.in > reporter->window_in)
        reporter->window_in = peaks.in;
    reporter->window_filled += frames;

    if (reporter->window_filled >= reporter->window_frames) {
        enum apa_level level = level_of(reporter->window_in, reporter->last_level);
        if (level != reporter->last_level || reporter->interval_ms ||
            now_ns - reporter->last_report_ns >= APA_KEEPALIVE_NS)
            reporter->due = true;
        reporter->last_level = level;
        reporter->window_filled = 0;
        reporter->window_in = 0;
    }
    if (!reporter->due || now_ns - reporter->last_report_ns < reporter->min_gap_ns)
        return false;

    /* The span covers every frame since the last report, so a short sound between two reports
     * still shows in the next one. */
    span->peaks = reporter->pending;
    span->frames = reporter->pending_frames;
    reporter->pending = (struct apa_peaks){0};
    reporter->pending_frames = 0;
    reporter->due = false;
    reporter->last_report_ns = now_ns;
    return true;
}
