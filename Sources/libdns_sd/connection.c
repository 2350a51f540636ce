/* The Unix stream socket to heraldd's app socket: connecting, sending requests (the first one of a
 * connection with its status in band, later ones with an error-return socket passed by SCM_RIGHTS),
 * and reading exact byte counts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Herald's default app-socket path (IPCConstants.defaultSocketPath in HeraldIPC). */
static const char default_socket_path[] = "/run/herald/dnssd.sock";
/* How long a request's status may take: the daemon answers at once, so this only ends a hang. */
static const int status_timeout_ms = 30000;

int connection_open(void) {
    const char *path = getenv("DNSSD_UDS_PATH");
    if (!path || !*path) path = default_socket_path;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) return -1;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int result;
    do {
        result = connect(fd, (struct sockaddr *)&address, sizeof address);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Waits until `fd` is ready for `events`; 1 ready, 0 timed out, -1 error. */
static int wait_for(int fd, short events, long long deadline) {
    for (;;) {
        int wait_ms = -1;
        if (deadline >= 0) {
            long long left = deadline - now_ms();
            if (left <= 0) return 0;
            wait_ms = left > 0x7FFFFFFF ? 0x7FFFFFFF : (int)left;
        }
        struct pollfd entry = {.fd = fd, .events = events};
        int result = poll(&entry, 1, wait_ms);
        if (result < 0 && errno == EINTR) continue;
        if (result < 0) return -1;
        return result > 0 ? 1 : 0;
    }
}

static int write_all(int fd, const uint8_t *bytes, size_t count) {
    while (count > 0) {
        ssize_t written = send(fd, bytes, count, MSG_NOSIGNAL);
        if (written < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (wait_for(fd, POLLOUT, -1) < 0) return -1;
                continue;
            }
            return -1;
        }
        bytes += written;
        count -= (size_t)written;
    }
    return 0;
}

int connection_read_exactly(int fd, void *buffer, size_t count, int timeout_ms) {
    uint8_t *at = buffer;
    long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    while (count > 0) {
        ssize_t got = recv(fd, at, count, 0);
        if (got == 0) return -1;
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (wait_for(fd, POLLIN, deadline) != 1) return -1;
                continue;
            }
            return -1;
        }
        at += got;
        count -= (size_t)got;
    }
    return 0;
}

int connection_has_input(int fd) {
    struct pollfd entry = {.fd = fd, .events = POLLIN};
    int result;
    do {
        result = poll(&entry, 1, 0);
    } while (result < 0 && errno == EINTR);
    return result > 0 && (entry.revents & POLLIN);
}

static DNSServiceErrorType read_status(int fd) {
    uint8_t word[4];
    /* The socket may be non-blocking (an event loop's choice): wait for the status explicitly. */
    long long deadline = now_ms() + status_timeout_ms;
    size_t have = 0;
    while (have < sizeof word) {
        if (wait_for(fd, POLLIN, deadline) != 1) return kDNSServiceErr_ServiceNotRunning;
        ssize_t got = recv(fd, word + have, sizeof word - have, 0);
        if (got == 0) return kDNSServiceErr_ServiceNotRunning;
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return kDNSServiceErr_ServiceNotRunning;
        }
        have += (size_t)got;
    }
    return (DNSServiceErrorType)((uint32_t)word[0] << 24 | (uint32_t)word[1] << 16 | (uint32_t)word[2] << 8 | word[3]);
}

DNSServiceErrorType connection_send_first(int fd, struct message *m) {
    if (message_finish(m) != 0) return kDNSServiceErr_BadParam;
    if (write_all(fd, m->bytes, m->length) != 0) return kDNSServiceErr_ServiceNotRunning;
    return read_status(fd);
}

void connection_send_plain(int fd, struct message *m) {
    if (message_finish(m) != 0) return;
    (void)write_all(fd, m->bytes, m->length);
}

DNSServiceErrorType connection_send_passing_socket(int fd, struct message *m) {
    if (message_finish(m) != 0) return kDNSServiceErr_BadParam;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return kDNSServiceErr_NoMemory;
    DNSServiceErrorType status = kDNSServiceErr_ServiceNotRunning;
    if (write_all(fd, m->bytes, m->length - 1) == 0) {
        /* The last byte carries the socket the daemon writes the status to. */
        struct iovec vector = {.iov_base = m->bytes + m->length - 1, .iov_len = 1};
        union {
            struct cmsghdr header;
            char space[CMSG_SPACE(sizeof(int))];
        } control;
        memset(&control, 0, sizeof control);
        struct msghdr message = {
            .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
        struct cmsghdr *item = CMSG_FIRSTHDR(&message);
        item->cmsg_level = SOL_SOCKET;
        item->cmsg_type = SCM_RIGHTS;
        item->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(item), &pair[1], sizeof(int));
        ssize_t sent;
        for (;;) {
            sent = sendmsg(fd, &message, MSG_NOSIGNAL);
            if (sent < 0 && errno == EINTR) continue;
            if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd, POLLOUT, -1) == 1) continue;
            break;
        }
        close(pair[1]);
        pair[1] = -1;
        if (sent == 1) status = read_status(pair[0]);
    }
    if (pair[1] >= 0) close(pair[1]);
    close(pair[0]);
    return status;
}
