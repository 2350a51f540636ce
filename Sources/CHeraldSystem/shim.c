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

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

long herald_release_file_pages(void) {
    enum { capacity = 1024 };
    static unsigned long starts[capacity], ends[capacity];
    int count = 0;
    FILE *smaps = fopen("/proc/self/smaps", "re");
    if (smaps == NULL) return -1;
    char line[4096];
    unsigned long start = 0, end = 0;
    int candidate = 0;
    while (fgets(line, sizeof line, smaps) != NULL) {
        unsigned long first, last, offset, inode, kilobytes;
        char permissions[8], device[32];
        int path = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %31s %lu %n", &first, &last, permissions, &offset, device, &inode,
                   &path) >= 6) {
            // A mapping's header line: private, not writable, backed by an ordinary file.
            start = first;
            end = last;
            candidate = permissions[1] != 'w' && permissions[3] == 'p' && inode != 0 && path > 0 && line[path] == '/'
                && strncmp(line + path, "/memfd:", 7) != 0 && strncmp(line + path, "/dev/", 5) != 0;
        } else if (candidate && sscanf(line, "Anonymous: %lu kB", &kilobytes) == 1) {
            // A page copied on write (a section relocated, then made read-only) would go back to the file's
            // bytes: such a mapping is left alone.
            if (kilobytes == 0 && count < capacity) {
                starts[count] = start;
                ends[count] = end;
                count++;
            }
            candidate = 0;
        }
    }
    fclose(smaps);
    // Advised after reading, so that the list of mappings cannot change under the reader.
    long released = 0;
    for (int i = 0; i < count; i++) {
        if (madvise((void *)starts[i], ends[i] - starts[i], MADV_DONTNEED) == 0) released += (long)(ends[i] - starts[i]);
    }
    return released;
}

#include <malloc.h>

size_t herald_heap_free_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
}

int herald_heap_trim(void) { return malloc_trim(0); }

long herald_resident_kib(void) {
    FILE *file = fopen("/proc/self/statm", "re");
    if (file == NULL) return -1;
    long size = 0, resident = 0;
    int read = fscanf(file, "%ld %ld", &size, &resident);
    fclose(file);
    if (read != 2) return -1;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

size_t herald_heap_in_use_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
