/*
 * Unit tests of the ALSA plugin's parts that need no ALSA: the gain ramp and sample loops, peak
 * measurement and reporting, the wire format (with a fuzzer), and the stream's conversation with a
 * daemon over a real socket. Every check that can pass is paired with a control that must fail.
 * Built and run by Tests/ALSAPlugin/run. Environment: FUZZ_SEED (an extra fuzz seed), FUZZ_SCALE.
 */
#define _GNU_SOURCE
#include "gain_ramp.h"
#include "peak_report.h"
#include "stream.h"
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// MARK: - Harness

static int checks_failed_in_test;
static unsigned passed, failed;

#define CHECK(condition, ...)                                                        \
    do {                                                                             \
        if (!(condition)) {                                                          \
            checks_failed_in_test++;                                                 \
            fprintf(stderr, "  %s:%d: %s: ", __FILE__, __LINE__, #condition);        \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

static void run(const char *name, void (*test)(void))
{
    checks_failed_in_test = 0;
    test();
    if (checks_failed_in_test) {
        failed++;
        printf("FAIL %s\n", name);
    } else {
        passed++;
        printf("PASS %s\n", name);
    }
    fflush(stdout);
}

/* xorshift64*: a fixed sequence from a seed, the same on every machine. */
static uint64_t rng_state;
static uint64_t next_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static unsigned random_below(unsigned bound) { return (unsigned)(next_random() % bound); }
static float random_unit(void) { return (float)(next_random() >> 40) / (float)(1 << 24); }

// MARK: - Gain ramp

/* The gains a ramp gives to `frames` frames, read back by ramping a signal of 1.0 in random chunks. */
static void ramp_gains(struct apa_gain_ramp *ramp, float *gains, size_t frames)
{
    size_t done = 0;
    while (done < frames) {
        size_t chunk = 1 + random_below(700);
        if (chunk > frames - done)
            chunk = frames - done;
        float ones[700];
        for (size_t i = 0; i < chunk; i++)
            ones[i] = 1.0f;
        struct apa_peaks peaks = {0};
        apa_apply_float(ramp, ones, 1, gains + done, 1, 1, chunk, &peaks);
        done += chunk;
    }
}

/* The largest frame-to-frame change of a gain sequence, starting from `before`. */
static double largest_jump(float before, const float *gains, size_t frames)
{
    double largest = 0, previous = before;
    for (size_t i = 0; i < frames; i++) {
        double jump = fabs(gains[i] - previous);
        largest = jump > largest ? jump : largest;
        previous = gains[i];
    }
    return largest;
}

static void test_ramp_is_smooth_and_lands_on_target(void)
{
    rng_state = 0x5eed1;
    enum { frames_max = 200000 };
    static float gains[frames_max + 100];
    for (int trial = 0; trial < 300; trial++) {
        float from = trial % 3 ? random_unit() : 1.0f, to = trial % 5 ? random_unit() : 0.0f;
        uint64_t length = trial < 20 ? (uint64_t)trial + 1 : 1 + random_below(frames_max);
        struct apa_gain_ramp ramp;
        apa_gain_ramp_settle(&ramp, from);
        apa_gain_ramp_start(&ramp, to, length);
        double step = fabs((double)to - from) / (double)length;
        ramp_gains(&ramp, gains, length + 100);
        /* One float rounding of the gain on each side of a step. */
        double allowed = step + 2 * 6e-8;
        CHECK(largest_jump(from, gains, length + 100) <= allowed, "trial %d: %g -> %g over %llu: jump %g > step %g",
              trial, from, to, (unsigned long long)length, largest_jump(from, gains, length + 100), step);
        CHECK(gains[length - 1] == to, "trial %d: last frame %.9g, target %.9g", trial, gains[length - 1], to);
        CHECK(gains[length + 99] == to && ramp.remaining == 0, "trial %d: does not rest on the target", trial);
        /* Not early either (when a step is larger than float resolution, so that it can be seen). */
        if (length > 2 && step > 1e-6)
            CHECK(gains[length - 2] != to, "trial %d: reached the target early", trial);
    }
    /* A ramp restarted halfway changes course without a jump. */
    struct apa_gain_ramp ramp;
    apa_gain_ramp_settle(&ramp, 1.0f);
    apa_gain_ramp_start(&ramp, 0.1f, 4800);
    ramp_gains(&ramp, gains, 2400);
    float halfway = gains[2399];
    apa_gain_ramp_start(&ramp, 1.0f, 480);
    ramp_gains(&ramp, gains, 480);
    CHECK(largest_jump(halfway, gains, 480) <= (1.0 - halfway) / 480 + 1.2e-7, "restart jumps %g",
          largest_jump(halfway, gains, 480));
    CHECK(gains[479] == 1.0f && apa_gain_ramp_is_unity(&ramp), "restart does not land on 1");

    /* Control: a settle (what a softvol step does) is a jump the check sees. */
    apa_gain_ramp_settle(&ramp, 0.1f);
    ramp_gains(&ramp, gains, 10);
    CHECK(largest_jump(1.0f, gains, 10) > (1.0 - 0.1) / 480, "control: the jump check missed a jump");
}

/* The daemon's curve (AudioPolicy's Ramp): a straight line in decibels from `from` to `to`, both at
 * least the floor, at `fraction` of the way. */
static double decibel_curve(double from, double to, double floor_db, double fraction)
{
    double from_db = from > 0 ? fmax(floor_db, 20 * log10(from)) : floor_db;
    double to_db = to > 0 ? fmax(floor_db, 20 * log10(to)) : floor_db;
    return pow(10, (from_db + (to_db - from_db) * fraction) / 20);
}

/* The largest relative distance of a ramp's frames (all but the last) from the daemon's curve. */
static double distance_from_curve(const float *gains, uint64_t length, double from, double to, double floor_db)
{
    double largest = 0;
    for (uint64_t k = 1; k < length; k++) {
        double expected = decibel_curve(from, to, floor_db, (double)k / (double)length);
        double distance = fabs(gains[k - 1] - expected) / expected;
        largest = distance > largest ? distance : largest;
    }
    return largest;
}

static void test_decibel_ramp_follows_the_daemons_curve(void)
{
    rng_state = 0xdb5eed;
    enum { frames_max = 200000 };
    static float gains[frames_max + 100];
    const float floor_db = -60.0f;
    for (int trial = 0; trial < 300; trial++) {
        float from = trial % 3 ? random_unit() : trial % 2 ? 1.0f : 0.0f;
        float to = trial % 5 ? random_unit() : 0.0f;
        uint64_t length = trial < 20 ? (uint64_t)trial + 1 : 1 + random_below(frames_max);
        struct apa_gain_ramp ramp;
        apa_gain_ramp_settle(&ramp, from);
        apa_gain_ramp_start_decibels(&ramp, to, length, floor_db);
        ramp_gains(&ramp, gains, length + 100);
        /* Float storage of each gain, and the double ratio's rounding over up to 200000 frames. */
        double distance = distance_from_curve(gains, length, from, to, floor_db);
        CHECK(distance < 1e-5, "trial %d: %g -> %g over %llu: %g from the daemon's curve", trial, from, to,
              (unsigned long long)length, distance);
        CHECK(gains[length - 1] == to, "trial %d: last frame %.9g, target %.9g", trial, gains[length - 1], to);
        CHECK(gains[length + 99] == to && ramp.remaining == 0, "trial %d: does not rest on the target", trial);
    }
    /* Restarted halfway, it changes course from where it is: no jump larger than the steps around it. */
    struct apa_gain_ramp ramp;
    apa_gain_ramp_settle(&ramp, 1.0f);
    apa_gain_ramp_start_decibels(&ramp, 0.1f, 4800, floor_db);
    ramp_gains(&ramp, gains, 2400);
    float halfway = gains[2399];
    CHECK(fabs(halfway - decibel_curve(1, 0.1, floor_db, 0.5)) < 1e-5, "halfway at %g", halfway);
    apa_gain_ramp_start_decibels(&ramp, 1.0f, 480, floor_db);
    ramp_gains(&ramp, gains, 480);
    CHECK(largest_jump(halfway, gains, 480) <= 1.0 - pow(halfway, 1.0 / 480) + 1e-6, "restart jumps %g",
          largest_jump(halfway, gains, 480));
    CHECK(gains[479] == 1.0f && apa_gain_ramp_is_unity(&ramp), "restart does not land on 1");

    /* Control: the linear ramp SET_GAIN gives is far from the curve (halfway from 1 to 0.1 it is at
     * 0.55, the curve at 0.32), so the check above would see a ramp that is not in decibels. */
    apa_gain_ramp_settle(&ramp, 1.0f);
    apa_gain_ramp_start(&ramp, 0.1f, 4800);
    ramp_gains(&ramp, gains, 4800);
    CHECK(distance_from_curve(gains, 4800, 1, 0.1, floor_db) > 0.5, "control: a linear ramp passed for the curve");
}

static void test_unity_is_bit_exact(void)
{
    rng_state = 0x5eed2;
    enum { frames = 4096, channels = 3 };
    static int16_t s16[frames * channels], s16_out[frames * channels];
    static int32_t s32[frames * channels], s32_out[frames * channels];
    static float f32[frames * channels], f32_out[frames * channels];
    for (int i = 0; i < frames * channels; i++) {
        s16[i] = (int16_t)next_random();
        s32[i] = (int32_t)next_random();
        uint32_t bits = (uint32_t)next_random();
        memcpy(&f32[i], &bits, sizeof bits);  /* every pattern: denormals, NaNs, infinities too */
    }
    s16[0] = INT16_MIN, s16[1] = INT16_MAX, s32[0] = INT32_MIN, s32[1] = INT32_MAX;

    /* At rest on 1, and after a ramp that came back to 1. */
    for (int after_ramp = 0; after_ramp < 2; after_ramp++) {
        struct apa_gain_ramp ramp;
        struct apa_peaks peaks = {0};
        apa_gain_ramp_settle(&ramp, 1.0f);
        if (after_ramp) {
            apa_gain_ramp_settle(&ramp, 0.3f);
            apa_gain_ramp_start(&ramp, 1.0f, 777);
            static float scratch[777];
            ramp_gains(&ramp, scratch, 777);
        }
        CHECK(apa_gain_ramp_is_unity(&ramp), "not at unity");
        apa_apply_s16(&ramp, s16, channels, s16_out, channels, channels, frames, &peaks);
        apa_apply_s32(&ramp, s32, channels, s32_out, channels, channels, frames, &peaks);
        apa_apply_float(&ramp, f32, channels, f32_out, channels, channels, frames, &peaks);
        CHECK(memcmp(s16, s16_out, sizeof s16) == 0, "S16 changed at unity");
        CHECK(memcmp(s32, s32_out, sizeof s32) == 0, "S32 changed at unity");
        CHECK(memcmp(f32, f32_out, sizeof f32) == 0, "FLOAT changed at unity");
    }
    /* Control: a gain a hair below 1 changes samples, and the comparison sees it. */
    struct apa_gain_ramp ramp;
    struct apa_peaks peaks = {0};
    apa_gain_ramp_settle(&ramp, 0.999f);
    apa_apply_s16(&ramp, s16, channels, s16_out, channels, channels, frames, &peaks);
    CHECK(memcmp(s16, s16_out, sizeof s16) != 0, "control: gain 0.999 left S16 unchanged");
}

static void test_gain_scales_and_mute_reaches_zero(void)
{
    int16_t s16[4] = {10000, -10000, INT16_MIN, 5}, out16[4];
    struct apa_gain_ramp ramp;
    struct apa_peaks peaks = {0};
    apa_gain_ramp_settle(&ramp, 0.1f);
    apa_apply_s16(&ramp, s16, 2, out16, 2, 2, 2, &peaks);
    CHECK(out16[0] == 1000 && out16[1] == -1000 && out16[2] == -3277 && out16[3] == 0, "S16 x0.1: %d %d %d %d",
          out16[0], out16[1], out16[2], out16[3]);

    /* A fade to silence ends in exact zeros, in every format, and not before its end. */
    enum { frames = 1000 };
    static int16_t in16[frames], o16[frames];
    static float inf[frames], of[frames];
    static int32_t in32[frames], o32[frames];
    for (int i = 0; i < frames; i++)
        in16[i] = INT16_MAX, inf[i] = 1.0f, in32[i] = INT32_MIN;
    struct apa_gain_ramp r16, rf, r32;
    apa_gain_ramp_settle(&r16, 1.0f);
    apa_gain_ramp_start(&r16, 0.0f, 600);
    rf = r32 = r16;
    peaks = (struct apa_peaks){0};
    apa_apply_s16(&r16, in16, 1, o16, 1, 1, frames, &peaks);
    apa_apply_float(&rf, inf, 1, of, 1, 1, frames, &peaks);
    apa_apply_s32(&r32, in32, 1, o32, 1, 1, frames, &peaks);
    bool silent = true;
    for (int i = 599; i < frames; i++)
        silent = silent && o16[i] == 0 && of[i] == 0.0f && o32[i] == 0;
    CHECK(silent, "not silent after the fade");
    CHECK(o16[598] != 0 && of[598] != 0.0f && o32[598] != 0, "control: silent before the fade ended");
}

// MARK: - Peaks

static void test_peaks_measure_what_goes_in_and_out(void)
{
    enum { frames = 480 };
    static int16_t s16[frames * 2], o16[frames * 2];
    static float f32[frames * 2], of32[frames * 2];
    for (int i = 0; i < frames; i++) {
        double phase = 2 * M_PI * 1000 * i / 48000.0;
        s16[2 * i] = (int16_t)lrint(16384 * sin(phase)), s16[2 * i + 1] = 0;
        f32[2 * i] = 0, f32[2 * i + 1] = (float)(-0.75 * cos(phase));
    }
    struct apa_gain_ramp ramp;
    struct apa_peaks peaks = {0};
    apa_gain_ramp_settle(&ramp, 1.0f);
    apa_apply_s16(&ramp, s16, 2, o16, 2, 2, frames, &peaks);
    CHECK(peaks.in == 0.5f && peaks.out == 0.5f, "S16 half scale: in %g out %g", peaks.in, peaks.out);

    peaks = (struct apa_peaks){0};
    apa_gain_ramp_settle(&ramp, 0.1f);
    apa_apply_float(&ramp, f32, 2, of32, 2, 2, frames, &peaks);
    CHECK(peaks.in == 0.75f && fabsf(peaks.out - 0.075f) < 1e-6f, "FLOAT x0.1: in %g out %g", peaks.in, peaks.out);

    /* One channel of a non-interleaved buffer: stride 1, one channel. */
    peaks = (struct apa_peaks){0};
    int16_t plane[3] = {-32768, 100, 0};
    apa_gain_ramp_settle(&ramp, 1.0f);
    apa_apply_s16(&ramp, plane, 1, plane, 1, 1, 3, &peaks);
    CHECK(peaks.in == 1.0f, "full scale negative: %g", peaks.in);

    /* Silence measures 0; control: one loud sample in it does not. */
    static int16_t quiet[frames];
    memset(quiet, 0, sizeof quiet);
    peaks = (struct apa_peaks){0};
    apa_apply_s16(&ramp, quiet, 1, quiet, 1, 1, frames, &peaks);
    CHECK(peaks.in == 0 && peaks.out == 0, "silence: %g", peaks.in);
    quiet[frames / 2] = 3000;
    apa_apply_s16(&ramp, quiet, 1, quiet, 1, 1, frames, &peaks);
    CHECK(peaks.in > 0.09f, "control: a click in silence not measured");
}

/* Feeds a reporter `seconds` of chunks of 1024 frames at 48 kHz, paced in real time; returns reports. */
static int feed(struct apa_peak_reporter *reporter, float level, double seconds, uint64_t *now,
                struct apa_peak_span *last, uint64_t *shortest_gap)
{
    int reports = 0;
    uint64_t previous = 0;
    for (double t = 0; t < seconds; t += 1024 / 48000.0) {
        *now += 1024ull * 1000000000 / 48000;
        struct apa_peak_span span;
        if (apa_peak_reporter_add(reporter, (struct apa_peaks){level, level}, 1024, *now, &span)) {
            if (previous && *now - previous < *shortest_gap)
                *shortest_gap = *now - previous;
            previous = *now;
            *last = span;
            reports++;
        }
    }
    return reports;
}

static void test_peak_reports(void)
{
    struct apa_peak_reporter reporter;
    struct apa_peak_span span = {0};
    uint64_t now = 1000000000, gap = UINT64_MAX;
    apa_peak_reporter_init(&reporter, 48000, 0);

    /* A silent stream says so in its first window, then every half second. */
    int reports = feed(&reporter, 0.0f, 0.15, &now, &span, &gap);
    CHECK(reports == 1 && span.peaks.in == 0.0f, "silent start: %d reports, peak %g", reports, span.peaks.in);
    reports = feed(&reporter, 0.0f, 2.0, &now, &span, &gap);
    CHECK(reports >= 3 && reports <= 5, "silent keepalive: %d reports in 2 s", reports);

    /* Sound is reported within a window; then only keepalives. */
    reports = feed(&reporter, 0.5f, 0.15, &now, &span, &gap);
    CHECK(reports == 1 && span.peaks.in == 0.5f, "onset: %d reports, peak %g", reports, span.peaks.in);
    reports = feed(&reporter, 0.5f, 2.0, &now, &span, &gap);
    CHECK(reports <= 5, "steady sound: %d reports in 2 s", reports);

    /* A short sound between two reports still shows in the next. */
    feed(&reporter, 0.0f, 0.6, &now, &span, &gap);
    now += 1024ull * 1000000000 / 48000;
    apa_peak_reporter_add(&reporter, (struct apa_peaks){0.3f, 0.3f}, 1024, now, &span);
    span.peaks.in = 0;
    for (int i = 0; i < 100 && span.peaks.in == 0; i++) {
        now += 1024ull * 1000000000 / 48000;
        apa_peak_reporter_add(&reporter, (struct apa_peaks){0, 0}, 1024, now, &span);
    }
    CHECK(span.peaks.in == 0.3f, "a blip was lost: %g", span.peaks.in);
    CHECK(gap >= APA_MIN_REPORT_GAP_NS, "two reports %llu ns apart", (unsigned long long)gap);

    /* During the burst that fills the buffer (no wall time passes), one report only. */
    apa_peak_reporter_restart(&reporter);
    int burst = 0;
    now += APA_KEEPALIVE_NS;
    for (int i = 0; i < 50; i++)  /* the level changes every window: each would be worth a report */
        burst += apa_peak_reporter_add(&reporter, (struct apa_peaks){i / 5 % 2 ? 0.5f : 0, 0}, 1024, now, &span);
    CHECK(burst == 1, "burst: %d reports", burst);
    /* Control: the same burst spread over real time is reported window by window. */
    apa_peak_reporter_restart(&reporter);
    burst = 0;
    for (int i = 0; i < 50; i++) {
        now += 1024ull * 1000000000 / 48000;
        burst += apa_peak_reporter_add(&reporter, (struct apa_peaks){i / 5 % 2 ? 0.5f : 0, 0}, 1024, now, &span);
    }
    CHECK(burst >= 8, "control: paced changes gave only %d reports", burst);

    /* Metered: one report per interval. Control for the rate limit: metering at 20 ms reports more
     * than the default mode does. */
    apa_peak_reporter_init(&reporter, 48000, 20);
    gap = UINT64_MAX;
    reports = feed(&reporter, 0.5f, 1.0, &now, &span, &gap);
    CHECK(reports > 20, "metered at 20 ms: only %d reports in 1 s", reports);
}

// MARK: - Wire

static void test_wire_layout(void)
{
    struct apa_hello hello;
    apa_wire_hello(&hello, &(struct apa_hello_fields){.pid = 0x01020304, .direction = APA_DIRECTION_PLAYBACK,
        .binary = "aplay", .class_hint = "navigation",
        .application = "a name that is much longer than sixty-four bytes, to be cut at the field's end", .pcm_name = NULL});
    const unsigned char *b = (const unsigned char *)&hello;
    CHECK(b[0] == 1 && b[1] == APA_MSG_HELLO && b[2] == 204 && b[3] == 0, "hello header");
    CHECK(b[4] == 4 && b[7] == 1, "pid little-endian");
    CHECK(strcmp((const char *)b + 12, "aplay") == 0 && strcmp((const char *)b + 44, "navigation") == 0, "names");
    CHECK(b[76 + 63] == 0 && strlen((const char *)b + 76) == 63, "long name cut with a NUL");
    CHECK(b[140] == 0, "empty pcm name");
    CHECK(b[8] == APA_DIRECTION_PLAYBACK && b[9] == APA_FEATURE_RAMP && b[10] == 0 && b[11] == 0,
          "hello names the features: %u", b[9]);

    struct apa_ramp ramp;
    apa_wire_ramp(&ramp, 0.25f, 300, -60.0f);
    b = (const unsigned char *)&ramp;
    float gain, floor_db;
    memcpy(&gain, b + 4, 4);
    memcpy(&floor_db, b + 12, 4);
    CHECK(b[1] == APA_MSG_RAMP && b[2] == 16 && gain == 0.25f && b[8] == (300 & 0xff) && b[9] == 1 &&
          floor_db == -60.0f, "ramp layout");

    struct apa_peak peak;
    apa_wire_peak(&peak, 0.5f, 0.25f, 4800, 0x0102030405060708ull);
    b = (const unsigned char *)&peak;
    float in;
    memcpy(&in, b + 4, 4);
    CHECK(in == 0.5f && b[12] == (4800 & 0xff) && b[16] == 8 && b[23] == 1, "peak layout");
}

static size_t command_size(int type)
{
    switch (type) {
    case APA_MSG_SET_GAIN: return sizeof(struct apa_set_gain);
    case APA_MSG_RAMP: return sizeof(struct apa_ramp);
    case APA_MSG_MUTE: return sizeof(struct apa_mute);
    case APA_MSG_METER: return sizeof(struct apa_meter);
    case APA_MSG_QUERY: return sizeof(struct apa_query);
    default: return 0;
    }
}

/* What a valid command looks like, judged without the parser. */
static bool valid_command(const unsigned char *packet, size_t length, const struct apa_command *command)
{
    size_t expected = command_size(packet[1]);
    if (length < 4 || packet[0] != 1 || expected == 0 || length != expected ||
        (size_t)(packet[2] | packet[3] << 8) != length || command->type != packet[1])
        return false;
    switch (command->type) {
    case APA_MSG_SET_GAIN: {
        float gain;
        memcpy(&gain, packet + 4, 4);
        return isfinite(gain) && gain >= 0 && gain <= 1 && command->gain == gain &&
               command->ramp_ms >= APA_MIN_RAMP_MS && command->ramp_ms <= APA_MAX_RAMP_MS;
    }
    case APA_MSG_RAMP: {
        float gain, floor_db;
        memcpy(&gain, packet + 4, 4);
        memcpy(&floor_db, packet + 12, 4);
        return isfinite(gain) && gain >= 0 && gain <= 1 && command->gain == gain && isfinite(floor_db) &&
               floor_db >= APA_MIN_FLOOR_DB && floor_db < 0 && command->floor_db == floor_db &&
               command->ramp_ms >= APA_MIN_RAMP_MS && command->ramp_ms <= APA_MAX_RAMP_MS;
    }
    case APA_MSG_MUTE:
        return packet[4] <= 1 && command->muted == packet[4] && command->ramp_ms >= APA_MIN_RAMP_MS &&
               command->ramp_ms <= APA_MAX_RAMP_MS;
    case APA_MSG_METER:
        return command->interval_ms == 0 || command->interval_ms == APA_METER_OFF ||
               (command->interval_ms >= APA_MIN_METER_INTERVAL_MS && command->interval_ms <= APA_MAX_METER_INTERVAL_MS);
    default:
        return true;
    }
}

static void test_wire_commands(void)
{
    struct apa_set_gain set;
    struct apa_mute mute;
    struct apa_meter meter;
    struct apa_query query;
    struct apa_command command;
    CHECK(apa_wire_parse_command(&set, apa_wire_set_gain(&set, 0.1f, 300), &command) &&
          command.type == APA_MSG_SET_GAIN && command.gain == 0.1f && command.ramp_ms == 300, "set gain");
    CHECK(apa_wire_parse_command(&set, apa_wire_set_gain(&set, 0.5f, 0), &command) &&
          command.ramp_ms == APA_MIN_RAMP_MS, "ramp 0 stretched");
    CHECK(apa_wire_parse_command(&set, apa_wire_set_gain(&set, 0.5f, 4000000000u), &command) &&
          command.ramp_ms == APA_MAX_RAMP_MS, "huge ramp clamped");
    CHECK(apa_wire_parse_command(&mute, apa_wire_mute(&mute, true, 50), &command) && command.muted, "mute");
    CHECK(apa_wire_parse_command(&meter, apa_wire_meter(&meter, 5), &command) &&
          command.interval_ms == APA_MIN_METER_INTERVAL_MS, "meter clamped");
    CHECK(apa_wire_parse_command(&meter, apa_wire_meter(&meter, APA_METER_OFF), &command) &&
          command.interval_ms == APA_METER_OFF, "meter off is not clamped");
    CHECK(apa_wire_parse_command(&query, apa_wire_query(&query), &command), "query");
    struct apa_ramp ramp;
    CHECK(apa_wire_parse_command(&ramp, apa_wire_ramp(&ramp, 0.3f, 400, -60.0f), &command) &&
          command.type == APA_MSG_RAMP && command.gain == 0.3f && command.ramp_ms == 400 &&
          command.floor_db == -60.0f, "ramp");
    CHECK(apa_wire_parse_command(&ramp, apa_wire_ramp(&ramp, 0.3f, 0, -60.0f), &command) &&
          command.ramp_ms == APA_MIN_RAMP_MS, "ramp 0 stretched");
    const float bad_floors[] = {NAN, INFINITY, -INFINITY, 0.0f, 1.0f, -201.0f};
    for (size_t i = 0; i < sizeof bad_floors / sizeof bad_floors[0]; i++)
        CHECK(!apa_wire_parse_command(&ramp, apa_wire_ramp(&ramp, 0.3f, 10, bad_floors[i]), &command), "floor %g",
              bad_floors[i]);
    CHECK(!apa_wire_parse_command(&ramp, apa_wire_ramp(&ramp, 1.5f, 10, -60.0f), &command), "ramp gain 1.5");
    CHECK(apa_wire_parse_command(&ramp, apa_wire_ramp(&ramp, 0.3f, 10, APA_MIN_FLOOR_DB), &command),
          "control: the lowest floor refused");

    const float bad_gains[] = {NAN, -NAN, INFINITY, -INFINITY, -1.0f, -1e-30f, 1.0001f, 1e30f};
    for (size_t i = 0; i < sizeof bad_gains / sizeof bad_gains[0]; i++)
        CHECK(!apa_wire_parse_command(&set, apa_wire_set_gain(&set, bad_gains[i], 10), &command), "gain %g", bad_gains[i]);
    unsigned char packet[64];
    size_t length = apa_wire_set_gain((struct apa_set_gain *)packet, 0.5f, 10);
    packet[0] = 2;
    CHECK(!apa_wire_parse_command(packet, length, &command), "another version accepted");
    packet[0] = 1;
    CHECK(!apa_wire_parse_command(packet, length - 1, &command), "short packet accepted");
    CHECK(!apa_wire_parse_command(packet, length + 1, &command), "long packet accepted");
    packet[1] = APA_MSG_HELLO;
    CHECK(!apa_wire_parse_command(packet, length, &command), "a plugin's type accepted");
    length = apa_wire_mute((struct apa_mute *)packet, true, 10);
    packet[4] = 2;
    CHECK(!apa_wire_parse_command(packet, length, &command), "muted 2 accepted");
    CHECK(!apa_wire_parse_command(packet, 0, &command) && !apa_wire_parse_command(packet, 3, &command), "tiny");
}

static unsigned fuzz_seed(uint64_t seed, unsigned scale)
{
    rng_state = seed ? seed : 1;
    unsigned accepted = 0, wrong = 0;
    unsigned char packet[80];
    for (unsigned i = 0; i < 100000 * scale; i++) {
        size_t length = random_below(sizeof packet + 1);
        for (size_t j = 0; j < length; j++)
            packet[j] = (unsigned char)next_random();
        /* Half the packets get a plausible header, so that payload checks are reached too. */
        if (length >= 4 && random_below(2)) {
            static const int types[] = {APA_MSG_SET_GAIN, APA_MSG_RAMP, APA_MSG_MUTE, APA_MSG_METER, APA_MSG_QUERY,
                                        APA_MSG_PEAK};
            int type = types[random_below(6)];
            size_t size = command_size(type);
            if (size && size <= sizeof packet && random_below(4))
                length = size;
            packet[0] = random_below(8) ? 1 : (unsigned char)next_random();
            packet[1] = (unsigned char)type;
            packet[2] = (unsigned char)length, packet[3] = (unsigned char)(length >> 8);
            if ((type == APA_MSG_SET_GAIN || type == APA_MSG_RAMP) && length >= 8 && random_below(2)) {
                float gain = random_unit() * 1.2f - 0.1f;
                memcpy(packet + 4, &gain, 4);
            }
            if (type == APA_MSG_RAMP && length >= 16 && random_below(2)) {
                float floor_db = random_unit() * -250.0f + 10.0f;
                memcpy(packet + 12, &floor_db, 4);
            }
            if (type == APA_MSG_MUTE && length >= 5)
                packet[4] = (unsigned char)random_below(3);
        }
        struct apa_command command;
        memset(&command, 0xa5, sizeof command);
        struct apa_command untouched = command;
        if (apa_wire_parse_command(packet, length, &command)) {
            accepted++;
            if (!valid_command(packet, length, &command))
                wrong++;
        } else if (memcmp(&command, &untouched, sizeof command) != 0) {
            wrong++;
        }
    }
    CHECK(wrong == 0, "seed %llu: %u packets parsed wrongly", (unsigned long long)seed, wrong);
    return accepted;
}

static void test_wire_fuzz(void)
{
    const char *scale_text = getenv("FUZZ_SCALE");
    unsigned scale = scale_text ? (unsigned)atoi(scale_text) : 1;
    scale = scale ? scale : 1;
    unsigned accepted = fuzz_seed(20240601, scale);
    /* Control: the fuzzer reaches the accepting path, so "no wrong acceptance" means something. */
    CHECK(accepted > 1000, "only %u packets accepted: the fuzzer does not reach the payload checks", accepted);
    const char *seed_text = getenv("FUZZ_SEED");
    if (seed_text) {
        uint64_t seed = strtoull(seed_text, NULL, 0);
        int before = checks_failed_in_test;
        fuzz_seed(seed, scale);
        if (checks_failed_in_test != before)
            fprintf(stderr, "  reproduce with FUZZ_SEED=%llu\n", (unsigned long long)seed);
    }
}

// MARK: - Stream and daemon over a real socket

struct fake_daemon {
    char path[108];
    int listener;
};

static void daemon_listen(struct fake_daemon *daemon)
{
    daemon->listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strcpy(address.sun_path, daemon->path);
    unlink(daemon->path);
    if (bind(daemon->listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(daemon->listener, 4) != 0)
        perror("fake daemon");
}

static int daemon_accept(struct fake_daemon *daemon)
{
    return accept4(daemon->listener, NULL, NULL, SOCK_NONBLOCK);
}

/* Types of every packet waiting on `fd`, in order, as a string of letters: H F S P. */
static void daemon_read(int fd, char *types, size_t size, struct apa_state *last_state)
{
    size_t n = 0;
    unsigned char packet[512];
    ssize_t length;
    while ((length = recv(fd, packet, sizeof packet, MSG_DONTWAIT)) > 0 && n + 1 < size) {
        types[n++] = " HFSP"[packet[1] <= 4 ? packet[1] : 0];
        if (packet[1] == APA_MSG_STATE && last_state)
            memcpy(last_state, packet, sizeof *last_state);
    }
    types[n] = 0;
}

static const struct apa_hello_fields hello_fields = {.pid = 1, .binary = "unit", .class_hint = "navigation"};
#define MS 1000000ull

/* Runs `frames` frames of a constant S16 signal through the stream; returns the last output sample. */
static int16_t play(struct apa_stream *stream, size_t frames, uint64_t *now)
{
    int16_t samples[480], last = 0;
    for (size_t done = 0; done < frames; done += 480) {
        *now += 10 * MS;
        apa_stream_poll(stream, *now);
        for (int i = 0; i < 480; i++)
            samples[i] = 10000;
        struct apa_peaks peaks = {0};
        apa_apply_s16(&stream->ramp, samples, 1, samples, 1, 1, 480, &peaks);
        apa_stream_account(stream, peaks, 480, *now);
        last = samples[479];
    }
    return last;
}

static void test_stream_without_daemon_plays_untouched(void)
{
    struct apa_stream stream;
    uint64_t now = 5000 * MS;
    apa_stream_open(&stream, "/nonexistent/audio-policyd/alsa", &hello_fields, 100, now);
    apa_stream_set_format(&stream, 48000, 1, APA_FORMAT_S16_LE, 4800, 480);
    apa_stream_set_state(&stream, APA_STATE_PREPARED);
    CHECK(play(&stream, 48000, &now) == 10000 && apa_gain_ramp_is_unity(&stream.ramp), "changed without a daemon");
    CHECK(!apa_daemon_link_is_up(&stream.link), "connected to nothing");
    apa_stream_close(&stream);
}

static void test_stream_talks_to_daemon_and_survives_its_death(void)
{
    struct fake_daemon daemon;
    snprintf(daemon.path, sizeof daemon.path, "/tmp/apa-unit-%d.sock", (int)getpid());
    daemon_listen(&daemon);
    char types[4096];
    struct apa_state state;

    for (int kill_daemon = 0; kill_daemon < 2; kill_daemon++) {
        struct apa_stream stream;
        uint64_t now = 5000 * MS;
        apa_stream_open(&stream, daemon.path, &hello_fields, 100, now);
        int peer = daemon_accept(&daemon);
        CHECK(peer >= 0, "no connection");
        apa_stream_set_format(&stream, 48000, 1, APA_FORMAT_S16_LE, 4800, 480);
        apa_stream_set_state(&stream, APA_STATE_PREPARED);
        daemon_read(peer, types, sizeof types, &state);
        CHECK(strcmp(types, "HSFSS") == 0, "introduction: %s", types);

        struct apa_set_gain set;
        send(peer, &set, apa_wire_set_gain(&set, 0.1f, 50), 0);
        int16_t out = play(&stream, 4800, &now);
        CHECK(out == 1000, "ducked to %d, not 1000", out);
        daemon_read(peer, types, sizeof types, &state);
        CHECK(types[0] == 'S' && strchr(types, 'P'), "running and a peak: %s", types);

        if (kill_daemon)
            close(peer);
        out = play(&stream, 480 * 11, &now);  /* restore ramp is 100 ms: 4800 frames */
        if (kill_daemon) {
            CHECK(out == 10000 && apa_gain_ramp_is_unity(&stream.ramp), "not back to unity: %d", out);
            CHECK(!apa_daemon_link_is_up(&stream.link), "link still up");
        } else {
            CHECK(out == 1000, "control: with the daemon alive the duck ended (%d)", out);
            struct apa_query query;
            send(peer, &query, apa_wire_query(&query), 0);
            play(&stream, 480, &now);
            apa_stream_close(&stream);
            daemon_read(peer, types, sizeof types, &state);
            CHECK(state.state == APA_STATE_CLOSED, "last state %d, not closed", state.state);
            float gain;
            memcpy(&gain, &state.gain, sizeof gain);
            CHECK(gain == 0.1f, "state reports gain %g", gain);
            CHECK(recv(peer, types, 1, MSG_DONTWAIT) == 0, "no EOF after close");
            close(peer);
            continue;
        }

        /* The daemon comes back: no attempt within a second of the last, then one. */
        play(&stream, 480 * 50, &now);  /* 0.5 s */
        CHECK(daemon_accept(&daemon) < 0, "reconnected within a second");
        play(&stream, 480 * 60, &now);
        peer = daemon_accept(&daemon);
        CHECK(peer >= 0, "did not reconnect");
        daemon_read(peer, types, sizeof types, &state);
        CHECK(strncmp(types, "HFS", 3) == 0, "reintroduction: %s", types);
        apa_stream_close(&stream);
        close(peer);
    }
    close(daemon.listener);
    unlink(daemon.path);
}

static void test_stream_mute_and_meter(void)
{
    struct fake_daemon daemon;
    snprintf(daemon.path, sizeof daemon.path, "/tmp/apa-unit-m-%d.sock", (int)getpid());
    daemon_listen(&daemon);
    struct apa_stream stream;
    uint64_t now = 5000 * MS;
    apa_stream_open(&stream, daemon.path, &hello_fields, 100, now);
    int peer = daemon_accept(&daemon);
    apa_stream_set_format(&stream, 48000, 1, APA_FORMAT_S16_LE, 4800, 480);
    apa_stream_set_state(&stream, APA_STATE_PREPARED);
    char types[4096];
    daemon_read(peer, types, sizeof types, NULL);

    struct apa_mute mute;
    struct apa_set_gain set;
    send(peer, &mute, apa_wire_mute(&mute, true, 20), 0);
    CHECK(play(&stream, 4800, &now) == 0, "muted stream not silent");
    /* A gain set while muted is kept for the unmute, and not heard before it. */
    send(peer, &set, apa_wire_set_gain(&set, 0.5f, 20), 0);
    CHECK(play(&stream, 4800, &now) == 0, "a gain unmuted the stream");
    send(peer, &mute, apa_wire_mute(&mute, false, 20), 0);
    int16_t out = play(&stream, 4800, &now);
    CHECK(out == 5000, "unmuted to %d, not to the gain set while muted (5000)", out);

    /* RAMP: the whole course in one message, along the daemon's curve. Halfway from 0.5 to 0.05 over
     * 200 ms it is at 0.158 (a linear ramp would be at 0.275), and then it rests on 0.05. */
    struct apa_ramp ramp;
    send(peer, &ramp, apa_wire_ramp(&ramp, 0.05f, 200, -60.0f), 0);
    int16_t middle = play(&stream, 4800, &now);
    int16_t end = play(&stream, 9600, &now);
    CHECK(abs(middle - 1581) <= 2, "halfway through the ramp at %d, not 1581", middle);
    CHECK(end == 500, "ramp ended at %d, not 500", end);

    /* Default reporting: a steady tone gives about two peaks a second. Control: METER 50 ms gives
     * about twenty. */
    daemon_read(peer, types, sizeof types, NULL);
    play(&stream, 48000, &now);
    daemon_read(peer, types, sizeof types, NULL);
    int quiet_mode = 0, metered = 0;
    for (char *t = types; *t; t++)
        quiet_mode += *t == 'P';
    struct apa_meter meter;
    send(peer, &meter, apa_wire_meter(&meter, 50), 0);
    play(&stream, 48000, &now);
    daemon_read(peer, types, sizeof types, NULL);
    for (char *t = types; *t; t++)
        metered += *t == 'P';
    CHECK(quiet_mode >= 2 && quiet_mode <= 3, "default reporting: %d peaks in 1 s", quiet_mode);
    CHECK(metered >= 18 && metered <= 21, "control: METER 50 ms gave %d peaks in 1 s", metered);

    /* METER off (a stream nobody measures): no peak in a second of a tone, so no wake-up of the daemon;
     * the controls above are the same tone giving two and twenty. METER 50 again brings them back. */
    int off = 0, back = 0;
    send(peer, &meter, apa_wire_meter(&meter, APA_METER_OFF), 0);
    play(&stream, 48000, &now);
    daemon_read(peer, types, sizeof types, NULL);
    for (char *t = types; *t; t++)
        off += *t == 'P';
    send(peer, &meter, apa_wire_meter(&meter, 50), 0);
    play(&stream, 48000, &now);
    daemon_read(peer, types, sizeof types, NULL);
    for (char *t = types; *t; t++)
        back += *t == 'P';
    CHECK(off == 0, "METER off: %d peaks in 1 s", off);
    CHECK(back >= 18 && back <= 21, "METER 50 ms after off: %d peaks in 1 s", back);

    apa_stream_close(&stream);
    close(peer);
    close(daemon.listener);
    unlink(daemon.path);
}

static void test_stream_ignores_hostile_daemon_and_never_blocks(void)
{
    struct fake_daemon daemon;
    snprintf(daemon.path, sizeof daemon.path, "/tmp/apa-unit-h-%d.sock", (int)getpid());
    daemon_listen(&daemon);
    struct apa_stream stream;
    uint64_t now = 5000 * MS;
    apa_stream_open(&stream, daemon.path, &hello_fields, 100, now);
    int peer = daemon_accept(&daemon);
    apa_stream_set_format(&stream, 48000, 2, APA_FORMAT_FLOAT_LE, 4800, 480);
    apa_stream_set_state(&stream, APA_STATE_PREPARED);

    /* A flood of garbage: at most APA_MAX_COMMANDS_PER_POLL read per transfer, none applied. */
    rng_state = 77;
    unsigned char junk[300];
    int sent = 0;
    for (; sent < 2000; sent++) {
        size_t length = 1 + random_below(sizeof junk);
        for (size_t j = 0; j < length; j++)
            junk[j] = (unsigned char)next_random();
        junk[0] = 1;  /* the right version, to get past the first check */
        if (send(peer, junk, length, MSG_DONTWAIT) < 0)
            break;
    }
    struct apa_set_gain nan_gain;
    send(peer, &nan_gain, apa_wire_set_gain(&nan_gain, NAN, 10), MSG_DONTWAIT);
    /* One transfer reads no more than its share. */
    apa_stream_poll(&stream, now);
    int left = 0;
    while (recv(stream.link.fd, junk, sizeof junk, MSG_DONTWAIT) > 0 && left < 10)
        left++;
    CHECK(left == 10, "one poll drained the flood");
    int16_t out = play(&stream, 48000, &now);
    CHECK(out == 10000 && apa_gain_ramp_is_unity(&stream.ramp), "garbage changed the gain: %d", out);
    CHECK(apa_daemon_link_is_up(&stream.link), "garbage dropped the link");
    CHECK(sent > 100, "the flood was only %d packets", sent);

    /* A daemon that never reads: sends are dropped, nothing blocks (alarm() guards the test). */
    alarm(20);
    for (int i = 0; i < 100000; i++)
        apa_stream_set_state(&stream, APA_STATE_PREPARED);
    alarm(0);
    CHECK(apa_daemon_link_is_up(&stream.link), "a full socket dropped the link");

    apa_stream_close(&stream);
    close(peer);
    close(daemon.listener);
    unlink(daemon.path);
}

static void test_reconnects_at_most_once_a_second(void)
{
    /* No daemon: a failed attempt puts the next one a second away. */
    struct apa_daemon_link link;
    apa_daemon_link_init(&link, "/nonexistent/audio-policyd/alsa");
    CHECK(!apa_daemon_link_connect(&link, 7000 * MS), "connected to nothing");
    CHECK(link.next_attempt_ns >= 8000 * MS, "next attempt after %llu ns", (unsigned long long)(link.next_attempt_ns - 7000 * MS));

    /* A daemon that accepts and hangs up at once is not hammered: over 3 s of transfers every 10 ms,
     * one connection a second. */
    struct fake_daemon daemon;
    snprintf(daemon.path, sizeof daemon.path, "/tmp/apa-unit-r-%d.sock", (int)getpid());
    daemon_listen(&daemon);
    struct apa_stream stream;
    uint64_t now = 5000 * MS;
    apa_stream_open(&stream, daemon.path, &hello_fields, 100, now);
    int connections = 0;
    for (int i = 0; i < 300; i++) {
        int peer;
        while ((peer = daemon_accept(&daemon)) >= 0) {
            connections++;
            close(peer);
        }
        play(&stream, 480, &now);
    }
    CHECK(connections >= 2 && connections <= 4, "%d connections in 3 s", connections);
    apa_stream_close(&stream);
    close(daemon.listener);
    unlink(daemon.path);
}

int main(void)
{
    run("ramp is smooth and lands on its target", test_ramp_is_smooth_and_lands_on_target);
    run("a ramp in decibels follows the daemon's curve", test_decibel_ramp_follows_the_daemons_curve);
    run("unity is bit-exact (S16, S32, FLOAT)", test_unity_is_bit_exact);
    run("gain scales, mute reaches zero", test_gain_scales_and_mute_reaches_zero);
    run("peaks measure what goes in and out", test_peaks_measure_what_goes_in_and_out);
    run("peak reports: silence, onsets, rate limits", test_peak_reports);
    run("wire layout", test_wire_layout);
    run("wire commands: valid, clamped, rejected", test_wire_commands);
    run("wire fuzz", test_wire_fuzz);
    run("stream without a daemon plays untouched", test_stream_without_daemon_plays_untouched);
    run("stream talks to the daemon and survives its death", test_stream_talks_to_daemon_and_survives_its_death);
    run("stream: mute, unmute to the latest gain, a whole ramp, metering", test_stream_mute_and_meter);
    run("stream ignores a hostile daemon and never blocks", test_stream_ignores_hostile_daemon_and_never_blocks);
    run("reconnects at most once a second", test_reconnects_at_most_once_a_second);
    printf("%u passed, %u failed\n", passed, failed);
    return failed ? 1 : 0;
}
