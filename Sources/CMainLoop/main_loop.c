/* The daemon's event loop: libpulse's pa_mainloop_api over ppoll(2).
 *
 * It follows the semantics of libpulse's own pa_mainloop, which the pulse backend was written against:
 * an iteration with deferred events enabled runs only those (and polls without waiting); otherwise it
 * waits for the earliest enabled timer or a file descriptor, then runs the timers that are due (each
 * disabled before its callback: they are one-shot), then the file descriptors that have events. Freed
 * events are marked dead and never called again; they are unlinked, their destroy callback called,
 * at the start of the next iteration, so that a callback may free any event, itself included. */

#define _GNU_SOURCE
#include "CMainLoop.h"

#include <pulse/mainloop-api.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

struct pa_io_event {
    apd_loop *loop;
    int fd;
    pa_io_event_flags_t events;
    pa_io_event_cb_t callback;
    pa_io_event_destroy_cb_t destroy;
    void *userdata;
    bool dead;
    /* Its slot in the loop's pollfd array, or -1 (rebuilt when events change). */
    int slot;
    struct pa_io_event *next;
};

struct pa_time_event {
    apd_loop *loop;
    bool enabled;
    /* When it is due, monotonic microseconds. */
    uint64_t due;
    /* The timeval as given, handed back to the callback. */
    struct timeval given;
    pa_time_event_cb_t callback;
    pa_time_event_destroy_cb_t destroy;
    void *userdata;
    bool dead;
    struct pa_time_event *next;
};

struct pa_defer_event {
    apd_loop *loop;
    bool enabled;
    pa_defer_event_cb_t callback;
    pa_defer_event_destroy_cb_t destroy;
    void *userdata;
    bool dead;
    struct pa_defer_event *next;
};

struct apd_loop {
    pa_mainloop_api api;
    pa_io_event *io_events;
    pa_time_event *time_events;
    pa_defer_event *defer_events;
    unsigned enabled_defer_events;
    /* Dead events not unlinked yet. */
    unsigned dead_events;
    struct pollfd *pollfds;
    unsigned pollfd_capacity;
    unsigned pollfd_count;
    bool rebuild_pollfds;
    bool quit;
    int retval;
};

uint64_t apd_monotonic_usec(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

/* A timeval given to time_new/time_restart as monotonic microseconds: monotonic time when it carries
 * the RTCLOCK bit (libpulse's pa_context_rttime_new, our Timer), wall-clock time otherwise. */
static uint64_t due_time(const struct timeval *tv) {
    if (tv->tv_usec & APD_TIMEVAL_RTCLOCK)
        return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)(tv->tv_usec & ~APD_TIMEVAL_RTCLOCK);
    struct timeval wall;
    gettimeofday(&wall, NULL);
    int64_t delta = ((int64_t)tv->tv_sec - (int64_t)wall.tv_sec) * 1000000 + ((int64_t)tv->tv_usec - (int64_t)wall.tv_usec);
    uint64_t now = apd_monotonic_usec();
    if (delta < 0 && (uint64_t)(-delta) > now) return 0;
    return now + (uint64_t)delta;
}

/* MARK: - I/O events */

static pa_io_event *io_new(pa_mainloop_api *api, int fd, pa_io_event_flags_t events, pa_io_event_cb_t callback,
                           void *userdata) {
    apd_loop *loop = api->userdata;
    pa_io_event *event = calloc(1, sizeof *event);
    if (!event) return NULL;
    event->loop = loop;
    event->fd = fd;
    event->events = events;
    event->callback = callback;
    event->userdata = userdata;
    event->slot = -1;
    event->next = loop->io_events;
    loop->io_events = event;
    loop->rebuild_pollfds = true;
    return event;
}

static void io_enable(pa_io_event *event, pa_io_event_flags_t events) {
    if (event->events == events) return;
    event->events = events;
    event->loop->rebuild_pollfds = true;
}

static void io_free(pa_io_event *event) {
    event->dead = true;
    event->loop->dead_events++;
    event->loop->rebuild_pollfds = true;
}

static void io_set_destroy(pa_io_event *event, pa_io_event_destroy_cb_t destroy) { event->destroy = destroy; }

static short poll_events(pa_io_event_flags_t flags) {
    return (short)((flags & PA_IO_EVENT_INPUT ? POLLIN : 0) | (flags & PA_IO_EVENT_OUTPUT ? POLLOUT : 0)
                   | (flags & PA_IO_EVENT_HANGUP ? POLLHUP : 0) | (flags & PA_IO_EVENT_ERROR ? POLLERR : 0));
}

static pa_io_event_flags_t io_flags(short revents) {
    return (pa_io_event_flags_t)((revents & POLLIN ? PA_IO_EVENT_INPUT : 0) | (revents & POLLOUT ? PA_IO_EVENT_OUTPUT : 0)
                                 | (revents & POLLHUP ? PA_IO_EVENT_HANGUP : 0)
                                 | (revents & (POLLERR | POLLNVAL) ? PA_IO_EVENT_ERROR : 0));
}

/* MARK: - Timers */

static pa_time_event *time_new(pa_mainloop_api *api, const struct timeval *tv, pa_time_event_cb_t callback,
                               void *userdata) {
    apd_loop *loop = api->userdata;
    pa_time_event *event = calloc(1, sizeof *event);
    if (!event) return NULL;
    event->loop = loop;
    event->callback = callback;
    event->userdata = userdata;
    if (tv) {
        event->enabled = true;
        event->given = *tv;
        event->due = due_time(tv);
    }
    event->next = loop->time_events;
    loop->time_events = event;
    return event;
}

static void time_restart(pa_time_event *event, const struct timeval *tv) {
    if (tv) {
        event->enabled = true;
        event->given = *tv;
        event->due = due_time(tv);
    } else {
        event->enabled = false;
    }
}

static void time_free(pa_time_event *event) {
    event->dead = true;
    event->enabled = false;
    event->loop->dead_events++;
}

static void time_set_destroy(pa_time_event *event, pa_time_event_destroy_cb_t destroy) { event->destroy = destroy; }

/* MARK: - Deferred events */

static pa_defer_event *defer_new(pa_mainloop_api *api, pa_defer_event_cb_t callback, void *userdata) {
    apd_loop *loop = api->userdata;
    pa_defer_event *event = calloc(1, sizeof *event);
    if (!event) return NULL;
    event->loop = loop;
    event->enabled = true;
    event->callback = callback;
    event->userdata = userdata;
    event->next = loop->defer_events;
    loop->defer_events = event;
    loop->enabled_defer_events++;
    return event;
}

static void defer_enable(pa_defer_event *event, int enable) {
    if (event->dead || event->enabled == !!enable) return;
    event->enabled = !!enable;
    if (enable) event->loop->enabled_defer_events++;
    else event->loop->enabled_defer_events--;
}

static void defer_free(pa_defer_event *event) {
    defer_enable(event, 0);
    event->dead = true;
    event->loop->dead_events++;
}

static void defer_set_destroy(pa_defer_event *event, pa_defer_event_destroy_cb_t destroy) { event->destroy = destroy; }

static void quit(pa_mainloop_api *api, int retval) { apd_loop_quit(api->userdata, retval); }

/* MARK: - The loop */

apd_loop *apd_loop_new(void) {
    apd_loop *loop = calloc(1, sizeof *loop);
    if (!loop) return NULL;
    loop->api = (pa_mainloop_api){
        .userdata = loop,
        .io_new = io_new, .io_enable = io_enable, .io_free = io_free, .io_set_destroy = io_set_destroy,
        .time_new = time_new, .time_restart = time_restart, .time_free = time_free,
        .time_set_destroy = time_set_destroy,
        .defer_new = defer_new, .defer_enable = defer_enable, .defer_free = defer_free,
        .defer_set_destroy = defer_set_destroy,
        .quit = quit,
    };
    return loop;
}

void *apd_loop_api(apd_loop *loop) { return &loop->api; }

void apd_loop_quit(apd_loop *loop, int retval) {
    loop->quit = true;
    loop->retval = retval;
}

/* Unlinks and frees dead events (every event when `all`), calling their destroy callbacks. */
static void sweep(apd_loop *loop, bool all) {
    if (!all && loop->dead_events == 0) return;
    for (pa_io_event **link = &loop->io_events; *link;) {
        pa_io_event *event = *link;
        if (!all && !event->dead) { link = &event->next; continue; }
        *link = event->next;
        if (event->destroy) event->destroy(&loop->api, event, event->userdata);
        free(event);
    }
    for (pa_time_event **link = &loop->time_events; *link;) {
        pa_time_event *event = *link;
        if (!all && !event->dead) { link = &event->next; continue; }
        *link = event->next;
        if (event->destroy) event->destroy(&loop->api, event, event->userdata);
        free(event);
    }
    for (pa_defer_event **link = &loop->defer_events; *link;) {
        pa_defer_event *event = *link;
        if (!all && !event->dead) { link = &event->next; continue; }
        *link = event->next;
        if (event->destroy) event->destroy(&loop->api, event, event->userdata);
        free(event);
    }
    /* The pollfds need no rebuild here: io_free asked for one when it marked the event dead. */
    loop->dead_events = 0;
}

void apd_loop_free(apd_loop *loop) {
    if (!loop) return;
    sweep(loop, true);
    free(loop->pollfds);
    free(loop);
}

static bool rebuild_pollfds(apd_loop *loop) {
    unsigned count = 0;
    for (pa_io_event *event = loop->io_events; event; event = event->next)
        if (!event->dead) count++;
    if (count > loop->pollfd_capacity) {
        unsigned capacity = count * 2;
        struct pollfd *grown = realloc(loop->pollfds, capacity * sizeof *grown);
        if (!grown) return false;
        loop->pollfds = grown;
        loop->pollfd_capacity = capacity;
    }
    unsigned slot = 0;
    for (pa_io_event *event = loop->io_events; event; event = event->next) {
        if (event->dead) { event->slot = -1; continue; }
        event->slot = (int)slot;
        loop->pollfds[slot++] = (struct pollfd){ .fd = event->fd, .events = poll_events(event->events) };
    }
    loop->pollfd_count = slot;
    loop->rebuild_pollfds = false;
    return true;
}

static int run_deferred(apd_loop *loop) {
    int ran = 0;
    for (pa_defer_event *event = loop->defer_events; event && !loop->quit; event = event->next) {
        if (event->dead || !event->enabled) continue;
        event->callback(&loop->api, event, event->userdata);
        ran++;
    }
    return ran;
}

/* The earliest due time of an enabled timer, or UINT64_MAX: a scan, as pa_mainloop's, over the few
 * timers a daemon has (a ramp's step, a hold's end, a reconnection). */
static uint64_t next_due(apd_loop *loop) {
    uint64_t earliest = UINT64_MAX;
    for (pa_time_event *event = loop->time_events; event; event = event->next)
        if (event->enabled && !event->dead && event->due < earliest) earliest = event->due;
    return earliest;
}

static int run_timers(apd_loop *loop) {
    int ran = 0;
    uint64_t now = apd_monotonic_usec();
    for (pa_time_event *event = loop->time_events; event && !loop->quit; event = event->next) {
        if (event->dead || !event->enabled || event->due > now) continue;
        event->enabled = false;
        struct timeval given = event->given;
        event->callback(&loop->api, event, &given, event->userdata);
        ran++;
    }
    return ran;
}

static int run_io(apd_loop *loop, int polled) {
    int ran = 0;
    if (polled <= 0) return 0;
    for (pa_io_event *event = loop->io_events; event && !loop->quit; event = event->next) {
        if (event->dead || event->slot < 0 || (unsigned)event->slot >= loop->pollfd_count) continue;
        struct pollfd *fd = &loop->pollfds[event->slot];
        if (!fd->revents || fd->fd != event->fd) continue;
        pa_io_event_flags_t flags = io_flags(fd->revents);
        fd->revents = 0;
        event->callback(&loop->api, event, event->fd, flags, event->userdata);
        ran++;
    }
    return ran;
}

int apd_loop_iterate(apd_loop *loop, int block, int *retval) {
    if (loop->quit) goto quit;
    sweep(loop, false);
    if (loop->rebuild_pollfds && !rebuild_pollfds(loop)) return -1;

    struct timespec timeout, *wait = NULL;
    if (loop->enabled_defer_events || !block) {
        timeout = (struct timespec){ 0, 0 };
        wait = &timeout;
    } else {
        uint64_t due = next_due(loop);
        if (due != UINT64_MAX) {
            uint64_t now = apd_monotonic_usec();
            uint64_t in = due > now ? due - now : 0;
            timeout = (struct timespec){ .tv_sec = (time_t)(in / 1000000u), .tv_nsec = (long)(in % 1000000u) * 1000 };
            wait = &timeout;
        }
    }
    int polled = ppoll(loop->pollfds, loop->pollfd_count, wait, NULL);
    if (polled < 0) {
        if (errno != EINTR) return -1;
        polled = 0;
    }

    int ran;
    if (loop->enabled_defer_events) {
        ran = run_deferred(loop);
    } else {
        ran = run_timers(loop);
        if (!loop->quit) ran += run_io(loop, polled);
    }
    if (!loop->quit) return ran;
quit:
    if (retval) *retval = loop->retval;
    return -2;
}

int apd_loop_run(apd_loop *loop, int *retval) {
    int result;
    while ((result = apd_loop_iterate(loop, 1, retval)) >= 0) {}
    return result == -2 ? 1 : result;
}
