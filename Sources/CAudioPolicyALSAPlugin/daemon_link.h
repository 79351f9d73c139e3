/* The plugin's connection to the daemon: a non-blocking SOCK_SEQPACKET unix socket that never makes
 * the audio path wait. */
#ifndef APA_DAEMON_LINK_H
#define APA_DAEMON_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Internal to the plugin: it is loaded into other programs, and must not add names to them. */
#pragma GCC visibility push(hidden)

/* At most one connection attempt per second: a client without a daemon pays two system calls a second. */
#define APA_RECONNECT_NS 1000000000ull

struct apa_daemon_link {
    int fd;                     /* -1 while not connected */
    struct sockaddr_un address;
    bool has_address;           /* false when the path does not fit a sockaddr_un: never connects */
    uint64_t next_attempt_ns;
};

enum apa_link_result {
    APA_LINK_DONE,     /* sent; or received a packet */
    APA_LINK_NOTHING,  /* sending: dropped, the socket is full; receiving: no packet waiting */
    APA_LINK_LOST,     /* the daemon went away (EOF or an error): the link is closed now */
};

void apa_daemon_link_init(struct apa_daemon_link *link, const char *socket_path);

/* Tries to connect if not connected and an attempt is due at `now_ns`. True if it connected just now. */
bool apa_daemon_link_connect(struct apa_daemon_link *link, uint64_t now_ns);

bool apa_daemon_link_is_up(const struct apa_daemon_link *link);

/* Sends one packet without waiting. LOST closes the link. */
enum apa_link_result apa_daemon_link_send(struct apa_daemon_link *link, const void *packet, size_t length);

/* Receives one packet without waiting into `buffer`; *length is its real size, which may exceed
 * `capacity` (the packet was cut: the caller must ignore it). */
enum apa_link_result apa_daemon_link_receive(struct apa_daemon_link *link, void *buffer, size_t capacity,
                                             size_t *length);

void apa_daemon_link_close(struct apa_daemon_link *link);

#pragma GCC visibility pop

#endif
