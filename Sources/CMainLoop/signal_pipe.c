/* Process signals delivered through a pipe (the self-pipe trick), so that the loop runs their handlers
 * as ordinary callbacks: the handler only writes the signal's number, which is async-signal-safe, and
 * works whichever thread the kernel picks to deliver it to. */

#define _GNU_SOURCE
#include "CMainLoop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIGNALS 16

static int pipe_fds[2] = { -1, -1 };
static int caught[MAX_SIGNALS];
static struct sigaction before[MAX_SIGNALS];
static int caught_count;

static void on_signal(int signal) {
    int saved = errno;
    unsigned char number = (unsigned char)signal;
    /* A full pipe drops the byte: the loop is far behind, and has signals to read already. */
    ssize_t written = write(pipe_fds[1], &number, 1);
    (void)written;
    errno = saved;
}

int apd_signals_install(const int *signals, int count) {
    if (pipe_fds[0] >= 0) {
        errno = EBUSY;
        return -1;
    }
    if (count < 0 || count > MAX_SIGNALS) {
        errno = EINVAL;
        return -1;
    }
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigset_t unblock;
    sigemptyset(&unblock);
    caught_count = 0;
    for (int i = 0; i < count; i++) {
        if (sigaction(signals[i], &action, &before[caught_count]) != 0) continue;
        caught[caught_count++] = signals[i];
        sigaddset(&unblock, signals[i]);
    }
    /* A process may start with these signals blocked (inherited from a parent's thread, as test
     * runners do): then they would never arrive. */
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    return pipe_fds[0];
}

int apd_signals_next(void) {
    unsigned char number;
    if (pipe_fds[0] < 0) return 0;
    return read(pipe_fds[0], &number, 1) == 1 ? number : 0;
}

void apd_signals_uninstall(void) {
    if (pipe_fds[0] < 0) return;
    for (int i = 0; i < caught_count; i++) sigaction(caught[i], &before[i], NULL);
    caught_count = 0;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
}
