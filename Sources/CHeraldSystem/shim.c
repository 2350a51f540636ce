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
