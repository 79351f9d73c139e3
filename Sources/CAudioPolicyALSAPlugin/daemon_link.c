/* Socket calls only; what the packets mean is stream.c's business. */
#include "daemon_link.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void apa_daemon_link_init(struct apa_daemon_link *link, const char *socket_path)
{
    memset(link, 0, sizeof *link);
    link->fd = -1;
    link->address.sun_family = AF_UNIX;
    size_t length = socket_path ? strlen(socket_path) : 0;
    link->has_address = length > 0 && length < sizeof link->address.sun_path;
    if (link->has_address)
        memcpy(link->address.sun_path, socket_path, length + 1);
}

bool apa_daemon_link_is_up(const struct apa_daemon_link *link)
{
    return link->fd >= 0;
}

bool apa_daemon_link_connect(struct apa_daemon_link *link, uint64_t now_ns)
{
    if (link->fd >= 0 || !link->has_address || now_ns < link->next_attempt_ns)
        return false;
    link->next_attempt_ns = now_ns + APA_RECONNECT_NS;
    /* CLOEXEC: the socket must not leak into programs the client runs. */
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    /* A unix connect never waits for the peer's accept; with a full backlog it fails with EAGAIN
     * instead of blocking, and that counts as no daemon until the next attempt. */
    if (connect(fd, (const struct sockaddr *)&link->address, sizeof link->address) != 0) {
        close(fd);
        return false;
    }
    link->fd = fd;
    return true;
}

/* Closes after a failure. The next attempt stays where the last connect put it, a second after that
 * connect: a daemon that accepts and hangs up at once is not hammered, and one that ran for a while
 * and died is tried again at once. */
static enum apa_link_result lost(struct apa_daemon_link *link)
{
    apa_daemon_link_close(link);
    return APA_LINK_LOST;
}

enum apa_link_result apa_daemon_link_send(struct apa_daemon_link *link, const void *packet, size_t length)
{
    if (link->fd < 0)
        return APA_LINK_NOTHING;
    /* NOSIGNAL: a dead daemon must not SIGPIPE the client. */
    if (send(link->fd, packet, length, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
        return APA_LINK_DONE;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS)
        return APA_LINK_NOTHING;
    return lost(link);
}

enum apa_link_result apa_daemon_link_receive(struct apa_daemon_link *link, void *buffer, size_t capacity,
                                             size_t *length)
{
    if (link->fd < 0)
        return APA_LINK_NOTHING;
    /* TRUNC: the real size of a packet larger than the buffer, so that it can be told and ignored. */
    ssize_t received = recv(link->fd, buffer, capacity, MSG_DONTWAIT | MSG_TRUNC);
    if (received > 0) {
        *length = (size_t)received;
        return APA_LINK_DONE;
    }
    /* 0 is EOF (an empty packet reads the same, and is taken as a daemon that left). */
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return APA_LINK_NOTHING;
    return lost(link);
}

void apa_daemon_link_close(struct apa_daemon_link *link)
{
    if (link->fd >= 0)
        close(link->fd);
    link->fd = -1;
}
