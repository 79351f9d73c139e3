#ifndef AUDIO_POLICYD_CMAINLOOP_H
#define AUDIO_POLICYD_CMAINLOOP_H

/* The daemon's event loop, in C: libpulse's main-loop interface (`pa_mainloop_api`) served over
 * ppoll(2), so that the pulse backend runs on it unchanged while the daemon in ALSA mode never loads
 * libpulse (the interface is a header-only struct of function pointers). Single-threaded: every
 * function runs on the thread that iterates the loop. */

#include <stdint.h>

typedef struct apd_loop apd_loop;

/* A new loop, or NULL when out of memory. */
apd_loop *apd_loop_new(void);
/* Frees the loop and every event still on it, calling their destroy callbacks. */
void apd_loop_free(apd_loop *loop);
/* The libpulse interface that event sources and libpulse contexts use: a `pa_mainloop_api *` (left
 * untyped here so that Swift sees the one pa_mainloop_api, CPulse's). */
void *apd_loop_api(apd_loop *loop);
/* One iteration: runs enabled deferred events, or waits (when `block`) for the next timer or file
 * descriptor and dispatches what is due. Returns how many events ran, -2 once the loop has quit
 * (`*retval` then holds the code), -1 when polling failed. */
int apd_loop_iterate(apd_loop *loop, int block, int *retval);
/* Iterates until the loop quits (returns 1, the code in `*retval`) or polling fails (-1). */
int apd_loop_run(apd_loop *loop, int *retval);
/* Makes the loop return from apd_loop_run with `retval` once the running callback returns. */
void apd_loop_quit(apd_loop *loop, int retval);
/* Microseconds on CLOCK_MONOTONIC, the clock of the loop's timers. */
uint64_t apd_monotonic_usec(void);

/* The bit libpulse's main loops read in a timeval's tv_usec as "monotonic time"
 * (PA_TIMEVAL_RTCLOCK in pulsecore/core-rtclock.h, which public headers do not export). */
#define APD_TIMEVAL_RTCLOCK (1L << 30)

/* Process signals as bytes on a pipe the loop can watch (a self-pipe: the handler is
 * async-signal-safe). One set at a time for the process. Returns the pipe's reading end, or -1 with
 * errno (EBUSY when a set is installed already). */
int apd_signals_install(const int *signals, int count);
/* The next signal caught, or 0 when none is waiting. */
int apd_signals_next(void);
/* Restores the signals' earlier dispositions and closes the pipe. */
void apd_signals_uninstall(void);

#endif
