/*
 * server-answer-probe: how long the sound server takes to describe a new stream, with no
 * audio-policyd at all — the floor under the daemon's reaction time (README, Benchmarks).
 *
 * On each new sink input it asks, in the same instant, for the stream's description
 * (get_sink_input_info, what the daemon needs) and for the server's info (get_server_info,
 * which no stream's state goes into), and times both answers. If the two are late together,
 * the server's main thread was busy, whatever was asked.
 *
 *   cc -O2 -o /tmp/probe scripts/server-answer-probe.c $(pkg-config --cflags --libs libpulse)
 *   /tmp/probe 150 &          # then start 150 streams one after another, e.g. pacat prompts
 *
 * Prints p50/p90/p99/max in microseconds for both once COUNT new streams were timed.
 */
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_SAMPLES 10000

static long long started[MAX_SAMPLES], described[MAX_SAMPLES], serverAnswered[MAX_SAMPLES];
static int wanted, seen;

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static int by_value(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void print_percentiles(const char *what, long long *answered) {
    long long delays[MAX_SAMPLES];
    for (int i = 0; i < wanted; i++) delays[i] = answered[i] - started[i];
    qsort(delays, wanted, sizeof delays[0], by_value);
    printf("%s (us): p50 %lld, p90 %lld, p99 %lld, max %lld (n=%d)\n", what, delays[wanted / 2],
           delays[wanted * 9 / 10], delays[wanted * 99 / 100], delays[wanted - 1], wanted);
}

/* The first call is the answer: the description, or the end of the list if the stream was already gone. */
static void stream_described(pa_context *c, const pa_sink_input_info *info, int eol, void *sample) {
    if (!described[(long)sample]) described[(long)sample] = now_us();
}

static void server_answered(pa_context *c, const pa_server_info *info, void *sample) {
    serverAnswered[(long)sample] = now_us();
}

static void event(pa_context *c, pa_subscription_event_type_t type, uint32_t index, void *unused) {
    if ((type & PA_SUBSCRIPTION_EVENT_FACILITY_MASK) != PA_SUBSCRIPTION_EVENT_SINK_INPUT ||
        (type & PA_SUBSCRIPTION_EVENT_TYPE_MASK) != PA_SUBSCRIPTION_EVENT_NEW || seen >= wanted)
        return;
    long sample = seen++;
    started[sample] = now_us();
    pa_operation_unref(pa_context_get_sink_input_info(c, index, stream_described, (void *)sample));
    pa_operation_unref(pa_context_get_server_info(c, server_answered, (void *)sample));
}

static void state_changed(pa_context *c, void *unused) {
    switch (pa_context_get_state(c)) {
    case PA_CONTEXT_READY:
        pa_context_set_subscribe_callback(c, event, NULL);
        pa_operation_unref(pa_context_subscribe(c, PA_SUBSCRIPTION_MASK_SINK_INPUT, NULL, NULL));
        fprintf(stderr, "server-answer-probe: ready\n");
        break;
    case PA_CONTEXT_FAILED:
    case PA_CONTEXT_TERMINATED:
        fprintf(stderr, "server-answer-probe: %s\n", pa_strerror(pa_context_errno(c)));
        exit(1);
    default:
        break;
    }
}

int main(int argc, char **argv) {
    wanted = argc > 1 ? atoi(argv[1]) : 0;
    if (wanted < 1 || wanted > MAX_SAMPLES) {
        fprintf(stderr, "usage: %s COUNT (1-%d)\n", argv[0], MAX_SAMPLES);
        return 2;
    }
    setpriority(PRIO_PROCESS, 0, -11); /* as audio-policyd asks for itself; ignored if refused */
    pa_mainloop *loop = pa_mainloop_new();
    pa_context *context = pa_context_new(pa_mainloop_get_api(loop), "server-answer-probe");
    pa_context_set_state_callback(context, state_changed, NULL);
    if (pa_context_connect(context, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
        fprintf(stderr, "server-answer-probe: %s\n", pa_strerror(pa_context_errno(context)));
        return 1;
    }
    while (seen < wanted || !described[wanted - 1] || !serverAnswered[wanted - 1])
        if (pa_mainloop_iterate(loop, 1, NULL) < 0) return 1;
    print_percentiles("get_sink_input_info", described);
    print_percentiles("get_server_info, asked at the same instant", serverAnswered);
    return 0;
}
