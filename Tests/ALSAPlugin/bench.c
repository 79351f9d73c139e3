/*
 * What the plugin costs the client: nanoseconds per frame for the gain and the peaks (10 s of stereo
 * 48 kHz audio in chunks of 1024 frames, at unity, at a steady duck, and while ramping), and the
 * per-chunk cost of talking to the daemon (a non-blocking recv that finds nothing, the clock, the peak
 * report's bookkeeping). Best of 5 runs, so another process's burst does not count.
 * Built -O2 and run by `Tests/ALSAPlugin/run --bench`.
 */
#define _GNU_SOURCE
#include "gain_ramp.h"
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { rate = 48000, channels = 2, chunk = 1024, frames = 10 * rate };

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

enum mode { UNITY, STEADY, RAMPING };
static const char *mode_names[] = {"unity", "steady -20 dB", "ramping"};

static int16_t s16[chunk * channels];
static float f32[chunk * channels];
static volatile float sink;

static double run(enum mode mode, int is_float)
{
    double best = 1e30;
    for (int trial = 0; trial < 5; trial++) {
        struct apa_gain_ramp ramp;
        apa_gain_ramp_settle(&ramp, mode == UNITY ? 1.0f : 0.1f);
        uint64_t start = now_ns();
        for (int done = 0; done < frames; done += chunk) {
            if (mode == RAMPING && ramp.remaining == 0)
                apa_gain_ramp_start(&ramp, ramp.target > 0.5f ? 0.1f : 1.0f, rate / 2);
            struct apa_peaks peaks = {0};
            if (is_float)
                apa_apply_float(&ramp, f32, channels, f32, channels, channels, chunk, &peaks);
            else
                apa_apply_s16(&ramp, s16, channels, s16, channels, channels, chunk, &peaks);
            sink = peaks.in + peaks.out;
        }
        double ns = (double)(now_ns() - start) / frames;
        best = ns < best ? ns : best;
    }
    return best;
}

/* The per-transfer work besides the samples, with a connected daemon that sends nothing. */
static double per_chunk_overhead(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/apa-bench-%d.sock", (int)getpid());
    int listener = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strcpy(address.sun_path, path);
    unlink(path);
    bind(listener, (struct sockaddr *)&address, sizeof address);
    listen(listener, 1);
    struct apa_stream stream;
    static const struct apa_hello_fields hello = {.binary = "bench"};
    apa_stream_open(&stream, path, &hello, 500, now_ns());
    int peer = accept(listener, NULL, NULL);
    apa_stream_set_format(&stream, rate, channels, APA_FORMAT_S16_LE, 8192, chunk);
    apa_stream_set_state(&stream, APA_STATE_PREPARED);
    enum { chunks = 100000 };
    uint64_t start = now_ns();
    for (int i = 0; i < chunks; i++) {
        uint64_t now = now_ns();
        apa_stream_poll(&stream, now);
        apa_stream_account(&stream, (struct apa_peaks){0.5f, 0.5f}, chunk, now);
    }
    double ns = (double)(now_ns() - start) / chunks;
    apa_stream_close(&stream);
    close(peer);
    close(listener);
    unlink(path);
    return ns;
}

int main(void)
{
    srand(1);
    for (int i = 0; i < chunk * channels; i++) {
        s16[i] = (int16_t)(rand() - RAND_MAX / 2);
        f32[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    }
    printf("gain and peaks, ns per stereo frame (best of 5 x 10 s at 48 kHz, chunks of %d):\n", chunk);
    for (enum mode mode = UNITY; mode <= RAMPING; mode++)
        printf("  %-14s S16 %5.2f   FLOAT %5.2f\n", mode_names[mode], run(mode, 0), run(mode, 1));
    double overhead = per_chunk_overhead();
    printf("per transfer (poll the socket, clock, peak bookkeeping): %.0f ns = %.2f ns/frame at %d frames\n",
           overhead, overhead / chunk, chunk);
    return 0;
}
