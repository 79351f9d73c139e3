/* streamwatch: prints, with millisecond timestamps, every sink-input, source-output and client of the
 * current PULSE_SERVER as it appears, changes cork state, and goes — from one persistent connection, so the
 * state at creation ("corked=1") is read within a millisecond or so of the server announcing the stream.
 *
 *   cc -O2 -o streamwatch streamwatch.c -lpulse     (bin/observe builds it on first use)
 *   streamwatch [T0]     T0: epoch seconds (float) that timestamps are relative to; default: now
 *
 * Lines:  <t> new sink-input 3 corked=1 client=7 {"media.name"="Playback", ...}
 *         <t> cork sink-input 3 corked=0
 *         <t> remove sink-input 3
 *         <t> new client 7 {"application.name"="Native client ...", ...}
 *         <t> props client 7 {"application.name"="Chromium", ...}     (a client's properties changed)
 */
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static double t0;
static pa_context *ctx;
#define MAXIDX 65536
static signed char corked[2][MAXIDX]; /* [0] sink inputs, [1] source outputs; -1 unknown */

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6 - t0;
}

static void props(pa_proplist *p) {
    void *state = NULL;
    const char *key;
    int first = 1;
    printf(" {");
    while ((key = pa_proplist_iterate(p, &state))) {
        const char *v = pa_proplist_gets(p, key);
        if (!v) continue;
        printf("%s\"%s\"=\"%s\"", first ? "" : ", ", key, v);
        first = 0;
    }
    printf("}");
}

static void report(int kind, uint32_t idx, int is_corked, uint32_t client, pa_proplist *p) {
    const char *name = kind == 0 ? "sink-input" : "source-output";
    if (idx >= MAXIDX) return;
    if (corked[kind][idx] == -1) {
        printf("%.3f new %s %u corked=%d client=%d", now(), name, idx, is_corked, (int)client);
        props(p);
        printf("\n");
    } else if (corked[kind][idx] != is_corked) {
        printf("%.3f cork %s %u corked=%d\n", now(), name, idx, is_corked);
    }
    corked[kind][idx] = (signed char)is_corked;
    fflush(stdout);
}

static void sink_input_cb(pa_context *c, const pa_sink_input_info *i, int eol, void *u) {
    (void)c; (void)u;
    if (eol || !i) return;
    report(0, i->index, i->corked, i->client, i->proplist);
}

static void source_output_cb(pa_context *c, const pa_source_output_info *i, int eol, void *u) {
    (void)c; (void)u;
    if (eol || !i) return;
    report(1, i->index, i->corked, i->client, i->proplist);
}

static char *client_seen[MAXIDX]; /* the properties last printed for each client */

static void client_cb(pa_context *c, const pa_client_info *i, int eol, void *u) {
    (void)c; (void)u;
    if (eol || !i || i->index >= MAXIDX) return;
    char *text = pa_proplist_to_string(i->proplist);
    int changed = client_seen[i->index] != NULL;
    if (changed && strcmp(client_seen[i->index], text) == 0) { pa_xfree(text); return; }
    pa_xfree(client_seen[i->index]);
    client_seen[i->index] = text;
    printf("%.3f %s client %u", now(), changed ? "props" : "new", i->index);
    props(i->proplist);
    printf("\n");
    fflush(stdout);
}

static void event_cb(pa_context *c, pa_subscription_event_type_t t, uint32_t idx, void *u) {
    (void)u;
    unsigned fac = t & PA_SUBSCRIPTION_EVENT_FACILITY_MASK, type = t & PA_SUBSCRIPTION_EVENT_TYPE_MASK;
    if (type == PA_SUBSCRIPTION_EVENT_REMOVE) {
        const char *name = fac == PA_SUBSCRIPTION_EVENT_SINK_INPUT ? "sink-input"
                         : fac == PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT ? "source-output"
                         : fac == PA_SUBSCRIPTION_EVENT_CLIENT ? "client" : NULL;
        if (!name) return;
        printf("%.3f remove %s %u\n", now(), name, idx);
        fflush(stdout);
        if (idx < MAXIDX && fac == PA_SUBSCRIPTION_EVENT_CLIENT) { pa_xfree(client_seen[idx]); client_seen[idx] = NULL; }
        if (idx < MAXIDX && fac == PA_SUBSCRIPTION_EVENT_SINK_INPUT) corked[0][idx] = -1;
        if (idx < MAXIDX && fac == PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT) corked[1][idx] = -1;
        return;
    }
    pa_operation *o = NULL;
    if (fac == PA_SUBSCRIPTION_EVENT_SINK_INPUT)
        o = pa_context_get_sink_input_info(c, idx, sink_input_cb, NULL);
    else if (fac == PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT)
        o = pa_context_get_source_output_info(c, idx, source_output_cb, NULL);
    else if (fac == PA_SUBSCRIPTION_EVENT_CLIENT)
        o = pa_context_get_client_info(c, idx, client_cb, NULL);
    if (o) pa_operation_unref(o);
}

static void state_cb(pa_context *c, void *u) {
    pa_mainloop_api *api = u;
    switch (pa_context_get_state(c)) {
    case PA_CONTEXT_READY:
        pa_context_set_subscribe_callback(c, event_cb, NULL);
        pa_operation_unref(pa_context_subscribe(c,
            PA_SUBSCRIPTION_MASK_SINK_INPUT | PA_SUBSCRIPTION_MASK_SOURCE_OUTPUT | PA_SUBSCRIPTION_MASK_CLIENT,
            NULL, NULL));
        /* What exists already. */
        pa_operation_unref(pa_context_get_sink_input_info_list(c, sink_input_cb, NULL));
        pa_operation_unref(pa_context_get_source_output_info_list(c, source_output_cb, NULL));
        printf("%.3f ready\n", now());
        fflush(stdout);
        break;
    case PA_CONTEXT_FAILED:
    case PA_CONTEXT_TERMINATED:
        fprintf(stderr, "streamwatch: connection ended: %s\n", pa_strerror(pa_context_errno(c)));
        api->quit(api, 1);
        break;
    default:
        break;
    }
}

int main(int argc, char **argv) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    t0 = argc > 1 ? atof(argv[1]) : tv.tv_sec + tv.tv_usec / 1e6;
    memset(corked, -1, sizeof corked);
    pa_mainloop *m = pa_mainloop_new();
    pa_mainloop_api *api = pa_mainloop_get_api(m);
    pa_proplist *p = pa_proplist_new();
    pa_proplist_sets(p, PA_PROP_APPLICATION_NAME, "streamwatch");
    ctx = pa_context_new_with_proplist(api, "streamwatch", p);
    pa_context_set_state_callback(ctx, state_cb, api);
    if (pa_context_connect(ctx, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
        fprintf(stderr, "streamwatch: %s\n", pa_strerror(pa_context_errno(ctx)));
        return 1;
    }
    int ret = 0;
    pa_mainloop_run(m, &ret);
    return ret;
}
