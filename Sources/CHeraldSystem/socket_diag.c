// Finding and ending sockets through the kernel's sock_diag interface (NETLINK_SOCK_DIAG), for kernel enforcement
// (docs/enforcement.md, "Sockets made before a process moved"): the sockets behind a set of inode numbers, with
// their addresses and the cgroup they were made in, and SOCK_DESTROY for the ones heraldd ends.
#include "CHeraldSystem.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int compare_inodes(const void *a, const void *b) {
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

static int open_diag(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct timeval timeout = {.tv_sec = 2, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    return fd;
}

struct diag_request {
    struct nlmsghdr header;
    struct inet_diag_req_v2 body;
};

// Dumps one family and protocol, adding the sockets whose inode is in `inodes` (sorted) to `out`.
static int dump(int fd, unsigned char family, unsigned char protocol, const unsigned long long *inodes,
                size_t inode_count, struct herald_socket_entry *out, size_t capacity, size_t *found) {
    struct diag_request request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_len = sizeof request;
    request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.body.sdiag_family = family;
    request.body.sdiag_protocol = protocol;
    request.body.idiag_states = ~0u;
    if (send(fd, &request, sizeof request, 0) < 0) return -1;
    static char buffer[32768];
    for (;;) {
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0) return -1;
        for (struct nlmsghdr *message = (struct nlmsghdr *)buffer; NLMSG_OK(message, (size_t)length);
             message = NLMSG_NEXT(message, length)) {
            if (message->nlmsg_type == NLMSG_DONE) return 0;
            if (message->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *error = NLMSG_DATA(message);
                errno = error->error < 0 ? -error->error : EIO;
                return -1;
            }
            if (message->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
            struct inet_diag_msg *diag = NLMSG_DATA(message);
            unsigned long long inode = diag->idiag_inode;
            if (!bsearch(&inode, inodes, inode_count, sizeof inode, compare_inodes)) continue;
            if (*found < capacity) {
                struct herald_socket_entry *entry = &out[*found];
                memset(entry, 0, sizeof *entry);
                entry->inode = inode;
                entry->family = diag->idiag_family;
                entry->protocol = protocol;
                entry->state = diag->idiag_state;
                entry->uid = diag->idiag_uid;
                entry->id = diag->id;
                // The cgroup the socket was made in, when the kernel says (INET_DIAG_CGROUP_ID, Linux 5.7).
                int remaining = (int)(message->nlmsg_len - NLMSG_LENGTH(sizeof *diag));
                for (struct rtattr *attribute = (struct rtattr *)(diag + 1); RTA_OK(attribute, remaining);
                     attribute = RTA_NEXT(attribute, remaining)) {
                    if (attribute->rta_type == INET_DIAG_CGROUP_ID &&
                        RTA_PAYLOAD(attribute) >= sizeof(unsigned long long)) {
                        memcpy(&entry->cgroup_id, RTA_DATA(attribute), sizeof entry->cgroup_id);
                    }
                }
            }
            (*found)++;
        }
    }
}

long herald_sockets_find(const unsigned long long *inodes, size_t inode_count, struct herald_socket_entry *out,
                         size_t capacity) {
    unsigned long long *sorted = malloc((inode_count ? inode_count : 1) * sizeof *sorted);
    if (!sorted) return -1;
    memcpy(sorted, inodes, inode_count * sizeof *sorted);
    qsort(sorted, inode_count, sizeof *sorted, compare_inodes);
    size_t found = 0;
    static const unsigned char families[] = {AF_INET, AF_INET6};
    static const unsigned char protocols[] = {IPPROTO_TCP, IPPROTO_UDP};
    int status = 0;
    for (size_t f = 0; f < 2 && status == 0; f++) {
        for (size_t p = 0; p < 2 && status == 0; p++) {
            int fd = open_diag();
            if (fd < 0) {
                status = -1;
                break;
            }
            status = dump(fd, families[f], protocols[p], sorted, inode_count, out, capacity, &found);
            int saved = errno;
            close(fd);
            errno = saved;
        }
    }
    free(sorted);
    return status == 0 ? (long)found : -1;
}

int herald_socket_destroy(const struct herald_socket_entry *entry) {
    int fd = open_diag();
    if (fd < 0) return -1;
    struct diag_request request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_len = sizeof request;
    request.header.nlmsg_type = SOCK_DESTROY;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    request.body.sdiag_family = entry->family;
    request.body.sdiag_protocol = entry->protocol;
    request.body.idiag_states = ~0u;
    request.body.id = entry->id;
    int status = -1;
    if (send(fd, &request, sizeof request, 0) >= 0) {
        char buffer[1024];
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        struct nlmsghdr *message = (struct nlmsghdr *)buffer;
        if (length >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) && message->nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr *error = NLMSG_DATA(message);
            if (error->error == 0) {
                status = 0;
            } else {
                errno = -error->error;
            }
        } else if (length >= 0) {
            errno = EIO;
        }
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return status;
}
