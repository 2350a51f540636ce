// Helpers that need _GNU_SOURCE declarations, kept out of the header so that Swift's Glibc module and
// this one agree on every shared structure.
#define _GNU_SOURCE
#include <sys/socket.h>
#include "CHeraldSystem.h"

int herald_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int herald_peer_pidfd(int fd, int pid, int *exact) {
    int pidfd = -1;
    socklen_t length = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) == 0 && pidfd >= 0) {
        *exact = 1;
        return pidfd;
    }
    *exact = 0;
    if (pid <= 0) return -1;
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int herald_pidfd_alive(int pidfd) {
    struct pollfd entry = { .fd = pidfd, .events = POLLIN, .revents = 0 };
    int ready = poll(&entry, 1, 0);
    if (ready < 0) return -1;
    return ready == 0 ? 1 : 0;
}
