// Helpers that need _GNU_SOURCE declarations, kept out of the header so that Swift's Glibc module and
// this one agree on every shared structure.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include "CHeraldSystem.h"

int herald_open_path_nofollow(const char *path) { return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC); }

int herald_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif

int herald_peer_pidfd(int fd, int pid, int *exact) {
    int pidfd = -1;
    socklen_t length = sizeof(pidfd);
    *exact = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) == 0 && pidfd >= 0) {
        *exact = 1;
        return pidfd;
    }
    // Only a kernel that does not know the option gets the fallback: any other failure (the peer is gone, no
    // memory) must not end in a pidfd for whichever process holds the pid now.
    if (errno != ENOPROTOOPT || pid <= 0) return -1;
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int herald_pass_credentials(int fd) {
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0) return -1;
    return setsockopt(fd, SOL_SOCKET, SO_PASSPIDFD, &on, sizeof(on)) == 0 ? 1 : 0;
}

int herald_pidfd_open(int pid) {
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/userfaultfd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

// The userfaultfd that file mappings are registered with, once they are; -1 before. Both under mappings_lock.
static int one_by_one_fd = -1;
// 0 once file mappings are registered, the errno of the step that failed, or -1 before the first try.
static int one_by_one_error = -1;

// Opens a userfaultfd in user mode only (no privilege needed), with write-protect faults resolved by the kernel
// itself (UFFD_FEATURE_WP_ASYNC: Linux 6.7 on x86-64, 6.10 on arm64), so no thread has to serve it. The descriptor,
// or -1 with errno set.
static int open_one_by_one_descriptor(void) {
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0) return -1;
    struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
    int error = ioctl(fd, UFFDIO_API, &api) != 0 ? errno : (api.features & UFFD_FEATURE_WP_ASYNC) == 0 ? EINVAL : 0;
    if (error != 0) {
        close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

// A private mapping of an ordinary file.
struct file_mapping {
    unsigned long start, end;
    // Not writable and holding no page copied on write (a section relocated, then made read-only, would go back to
    // the file's bytes if its pages were unmapped): its pages can be given back. Set only once smaps has shown
    // "Anonymous: 0 kB" for it.
    int clean;
};

// Every private file mapping is listed (all are registered), and at most this many: heraldd has about a hundred.
// Mappings past the limit keep the kernel's default and keep their pages. The list is rebuilt by each call below,
// under the lock.
enum { mapping_capacity = 1024 };
static struct file_mapping mappings[mapping_capacity];
static pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;

// Fills `mappings` from /proc/self/smaps; the count, or -1 (errno set) when it is unreadable.
static int private_file_mappings(void) {
    FILE *smaps = fopen("/proc/self/smaps", "re");
    if (smaps == NULL) return -1;
    int count = 0;
    int current = -1;  // the entry of the mapping whose lines are being read, or -1
    int writable = 0;
    char line[4096];
    while (fgets(line, sizeof line, smaps) != NULL) {
        unsigned long first, last, offset, inode, kilobytes;
        char permissions[8], device[32];
        int path = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %31s %lu %n", &first, &last, permissions, &offset, device, &inode,
                   &path) >= 6) {
            current = -1;
            int file = permissions[3] == 'p' && inode != 0 && path > 0 && line[path] == '/'
                && strncmp(line + path, "/memfd:", 7) != 0 && strncmp(line + path, "/dev/", 5) != 0;
            if (file && count < mapping_capacity) {
                current = count++;
                mappings[current] = (struct file_mapping){ first, last, 0 };
                writable = permissions[1] == 'w';
            }
        } else if (current >= 0 && sscanf(line, "Anonymous: %lu kB", &kilobytes) == 1) {
            mappings[current].clean = !writable && kilobytes == 0;
            current = -1;
        }
    }
    fclose(smaps);
    return count;
}

// Registers the first `count` of `mappings` for write-protect faults. Their pages are never write-protected, so
// no fault is ever raised: what the registration changes is that the kernel no longer maps the neighbours of a
// page on its first touch (no fault-around in a mapping registered with a userfaultfd). A mapping that cannot be
// registered keeps the kernel's default. The number registered; errno is that of the last failure.
static int map_one_by_one(int uffd, int count) {
    int registered = 0;
    for (int i = 0; i < count; i++) {
        struct uffdio_register range = {
            .range = { .start = mappings[i].start, .len = mappings[i].end - mappings[i].start },
            .mode = UFFDIO_REGISTER_MODE_WP };
        if (ioctl(uffd, UFFDIO_REGISTER, &range) == 0) registered++;
    }
    return registered;
}

// Tries once; later calls give the first one's outcome.
static int map_file_pages_one_by_one_locked(void) {
    if (one_by_one_error >= 0) return one_by_one_error;
    int uffd = open_one_by_one_descriptor();
    if (uffd < 0) return one_by_one_error = errno;
    int count = private_file_mappings();
    if (count < 0) {
        one_by_one_error = errno;
    } else {
        errno = ENOENT;  // no mapping to register
        one_by_one_error = map_one_by_one(uffd, count) > 0 ? 0 : errno;
    }
    if (one_by_one_error != 0) {
        close(uffd);
        return one_by_one_error;
    }
    one_by_one_fd = uffd;
    return 0;
}

int herald_map_file_pages_one_by_one(void) {
    pthread_mutex_lock(&mappings_lock);
    int outcome = map_file_pages_one_by_one_locked();
    pthread_mutex_unlock(&mappings_lock);
    return outcome;
}

int herald_file_pages_one_by_one_error(void) {
    pthread_mutex_lock(&mappings_lock);
    int error = one_by_one_error;
    pthread_mutex_unlock(&mappings_lock);
    return error;
}

long herald_release_file_pages(void) {
    pthread_mutex_lock(&mappings_lock);
    long released = -1;
    int count = private_file_mappings();
    if (count >= 0) {
        // Mappings made since the registration at start (a library loaded later) map one by one from now on too.
        if (one_by_one_fd >= 0) map_one_by_one(one_by_one_fd, count);
        // Advised after reading, so that the list of mappings cannot change under the reader.
        released = 0;
        for (int i = 0; i < count; i++) {
            unsigned long length = mappings[i].end - mappings[i].start;
            if (mappings[i].clean && madvise((void *)mappings[i].start, length, MADV_DONTNEED) == 0)
                released += (long)length;
        }
    }
    pthread_mutex_unlock(&mappings_lock);
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

#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>

int herald_interface_mtu(const char *name) {
    // Any socket will do for the device ioctls; a datagram socket of either family is always at hand.
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct ifreq request;
    memset(&request, 0, sizeof(request));
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    int result = ioctl(fd, SIOCGIFMTU, &request) == 0 ? request.ifr_mtu : -1;
    close(fd);
    return result;
}

#include <sys/uio.h>

long herald_read_process_memory(int pid, unsigned long address, void *buffer, unsigned long length) {
    struct iovec local = { .iov_base = buffer, .iov_len = length };
    struct iovec remote = { .iov_base = (void *)address, .iov_len = length };
    return (long)process_vm_readv(pid, &local, 1, &remote, 1, 0);
}
