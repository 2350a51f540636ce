// Linux system interfaces the daemon uses that Swift's Glibc module does not bring in:
// epoll, signalfd, timerfd, netlink, peer credentials, mapping file pages one by one, releasing start-up pages and
// trimming the heap.
#ifndef C_HERALD_SYSTEM_H
#define C_HERALD_SYSTEM_H

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/inet_diag.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>

/// The epoll event mask values as plain unsigned integers (the enum in sys/epoll.h imports awkwardly).
static inline unsigned int herald_epollin(void) { return EPOLLIN; }
static inline unsigned int herald_epollout(void) { return EPOLLOUT; }
static inline unsigned int herald_epollerr(void) { return EPOLLERR; }
static inline unsigned int herald_epollhup(void) { return EPOLLHUP; }

/// Reads the file descriptor out of an epoll_event (the struct is packed on x86-64).
static inline int herald_epoll_event_fd(const struct epoll_event *event) { return event->data.fd; }
static inline unsigned int herald_epoll_event_mask(const struct epoll_event *event) { return event->events; }

/// epoll_ctl for a file descriptor with the fd as its user data.
static inline int herald_epoll_ctl(int epfd, int op, int fd, unsigned int events) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = 0;
    event.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &event);
}

/// SO_PEERCRED of a connected Unix socket: the peer's pid, uid and gid at connect time. Returns 0 on success.
int herald_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid);

/// A pidfd for the peer of a connected Unix socket: SO_PEERPIDFD (Linux 6.5+), which names the very process
/// that connected; else pidfd_open of the SO_PEERCRED pid (Linux 5.3+). Returns -1 when neither works.
/// `exact` is set to 1 when the kernel vouched for the process (SO_PEERPIDFD), 0 for the pidfd_open fallback, which
/// is taken only where the kernel does not know SO_PEERPIDFD (ENOPROTOOPT), never after another failure.
int herald_peer_pidfd(int fd, int pid, int *exact);

/// Asks the kernel to attach the sender's credentials (SCM_CREDENTIALS: pid, uid, gid) and, where it can
/// (Linux 6.5+), a pidfd of the sender (SCM_PIDFD) to every message received on `fd`; connections accepted on a
/// listening socket inherit the setting. Returns 1 with both, 0 with credentials only, -1 on failure.
int herald_pass_credentials(int fd);

/// Reads `length` bytes at `address` in the memory of process `pid` (process_vm_readv, which needs the right to
/// trace it: CAP_SYS_PTRACE for another user's process). Returns the bytes read, or -1 with errno.
long herald_read_process_memory(int pid, unsigned long address, void *buffer, unsigned long length);

/// The MTU of the interface called `name` (SIOCGIFMTU), or -1 when it cannot be read.
int herald_interface_mtu(const char *name);

/// Opens the file at `path` itself, not what it names if it is a symbolic link, for fstat and for reaching it again
/// through /proc/self/fd (open with O_PATH | O_NOFOLLOW | O_CLOEXEC); -1 with errno on failure.
int herald_open_path_nofollow(const char *path);

/// pidfd_open(2) of `pid` (Linux 5.3+): a descriptor that keeps naming that process; -1 when it fails.
int herald_pidfd_open(int pid);

/// 1 while the process behind a pidfd runs, 0 once it has exited, -1 on error.
int herald_pidfd_alive(int pidfd);

/// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC (the TFD_ flags import awkwardly).
static inline int herald_timerfd_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

/// Arms a timerfd to fire once after `milliseconds` (at least 1 ms), or disarms it when `milliseconds` < 0.
static inline int herald_timerfd_arm(int fd, long long milliseconds) {
    struct itimerspec spec = {0};
    if (milliseconds >= 0) {
        if (milliseconds == 0) milliseconds = 1;
        spec.it_value.tv_sec = milliseconds / 1000;
        spec.it_value.tv_nsec = (milliseconds % 1000) * 1000000;
    }
    return timerfd_settime(fd, 0, &spec, 0);
}

/// Makes the kernel map the pages of this process's private file mappings (the code and constant data of the
/// executable and its libraries) one at a time, as they are first touched, instead of mapping the 64 KiB around
/// each (its fault-around): registered with a userfaultfd for write-protect faults, which the kernel resolves
/// itself (Linux 6.7 or later on x86-64, 6.10 on arm64). Their contents and protection do not change; the kernel
/// also leaves them out of huge-page collapsing, and a forked child does not inherit the registration. Call it as
/// early as possible: what was mapped before keeps its pages. It tries once, and herald_release_file_pages
/// registers mappings made later. Returns 0, or the errno that prevented it (mappings then keep the kernel's
/// default).
int herald_map_file_pages_one_by_one(void);
/// 0 when file mappings map one page at a time (see herald_map_file_pages_one_by_one), the errno that prevented it,
/// or -1 when it has not been tried.
int herald_file_pages_one_by_one_error(void);

/// Unmaps the resident pages of every private, read-only, file-backed mapping of this process (the code and
/// constant data of the executable and its libraries) that holds no page copied on write, so nothing written is
/// lost: the next access maps the page again from the page cache (a minor fault). Registers mappings made since
/// herald_map_file_pages_one_by_one, if that succeeded. Call it only while no other thread loads libraries.
/// Returns the bytes of address space advised, or -1 when /proc/self/smaps is unreadable.
long herald_release_file_pages(void);

/// Bytes the allocator holds free in its heap (glibc's mallinfo2 fordblks): memory freed by the program but
/// still resident in the process.
size_t herald_heap_free_bytes(void);
/// Bytes the allocator has handed out and not had back (small blocks and large mapped ones).
size_t herald_heap_in_use_bytes(void);
/// The process's resident set in KiB, from /proc/self/statm; -1 when it cannot be read.
long herald_resident_kib(void);

/// Returns the free pages of the allocator's heap to the kernel (glibc's malloc_trim(0)). 1 when some were.
int herald_heap_trim(void);

/// Runs `commands` (nft's language, one transaction) through libnftables, loaded at the first call. Returns 0 on
/// success, 1 when nft refused the commands, -1 when libnftables cannot be used; `output` and `error` receive what
/// nft printed (cut to their sizes).
int herald_nft_run(const char *commands, char *output, size_t output_size, char *error, size_t error_size);

/// The name the kernel shows for Herald's cgroup ingress program (`bpftool prog`, BPF_OBJ_GET_INFO_BY_FD).
#define HERALD_INGRESS_PROGRAM_NAME "herald_ingress"

/// Loads the cgroup ingress program (BPF_PROG_TYPE_CGROUP_SKB for BPF_CGROUP_INET_INGRESS): it drops each
/// multicast or broadcast packet delivered to a socket of the cgroups it is attached to, unless the socket is
/// owned by one of `operator_uids` or lies in a network namespace other than the one whose SO_NETNS_COOKIE is
/// `netns_cookie` (0: every namespace). With `only_cgroup_id` (not 0) it judges only the sockets of that cgroup
/// itself, and lets every other through: the program heraldd attaches at the hierarchy's root for the root
/// cgroup's own processes. Returns the program's descriptor, or -1 with errno; `log` receives the verifier's
/// words. Needs CAP_BPF and CAP_NET_ADMIN.
int herald_bpf_ingress_load(const unsigned int *operator_uids, size_t uid_count, unsigned long long netns_cookie,
                            unsigned long long only_cgroup_id, char *log, size_t log_size);

/// Attaches `program_fd` to the ingress of the cgroup v2 directory at `cgroup_path` through a BPF link
/// (BPF_LINK_CREATE, next to other programs there): the program stays attached while the returned descriptor
/// is open, and is detached when it is closed, by close() or by the process's end. -1 with errno on failure.
int herald_bpf_cgroup_link(int program_fd, const char *cgroup_path);

/// Pins the BPF object `fd` (a link here) at `path` in a BPF file system, so that it outlives the process: a
/// pinned link keeps its program attached until the pin is removed (unlink) and no descriptor is left. 0, or -1
/// with errno.
int herald_bpf_pin(int fd, const char *path);

/// A descriptor of the BPF object pinned at `path`, or -1 with errno.
int herald_bpf_pinned(const char *path);

/// The kernel's id of the program behind `program_fd`, or 0.
unsigned int herald_bpf_program_id(int program_fd);

/// The moved-socket programs (docs/enforcement.md, "Sockets made before a process moved"), in the order they are
/// loaded and linked: socket creation, socket release, IPv4 and IPv6 connect(), IPv4 and IPv6 sendmsg().
#define HERALD_MOVED_PROGRAMS 6
/// How many cgroups the standing map holds, and how many sockets the origin map follows.
#define HERALD_MOVED_STANDING_ENTRIES 65536
#define HERALD_MOVED_ORIGIN_ENTRIES 65536

/// Creates the two maps of the moved-socket programs: cgroup id → standing (0: the LAN is open, 1: multicast and
/// broadcast are held back, 2: the whole LAN is), and socket cookie → the cgroup id of the process that made it.
/// 0, or -1 with errno.
int herald_moved_maps_create(int *standing_map, int *origin_map);

/// Loads the six moved-socket programs on the two maps: a cgroup missing from the standing map stands at
/// `fallback`; the callers `operator_uids` and sockets of network namespaces other than `netns_cookie`'s (0:
/// every namespace) are never judged. Fills `programs`; 0, or -1 with errno (`log`: the verifier's words).
int herald_moved_programs_load(int standing_map, int origin_map, const unsigned int *operator_uids,
                               size_t uid_count, unsigned long long netns_cookie, unsigned int fallback,
                               int programs[HERALD_MOVED_PROGRAMS], char *log, size_t log_size);

/// Links the six programs to the cgroup v2 directory `cgroup_path`; fills `links` (closing one detaches its
/// program). 0, or -1 with errno, with nothing linked.
int herald_moved_programs_link(const int programs[HERALD_MOVED_PROGRAMS], const char *cgroup_path,
                               int links[HERALD_MOVED_PROGRAMS]);

/// Sets, or removes, the standing of the cgroup `cgroup_id` (its directory's inode number). 0, or -1 with errno.
int herald_moved_standing_set(int standing_map, unsigned long long cgroup_id, unsigned int standing);
int herald_moved_standing_remove(int standing_map, unsigned long long cgroup_id);

/// How many sockets the origin map follows now, or -1 with errno.
long herald_moved_origin_count(int origin_map);

/// A socket as sock_diag reports it: its inode, family (AF_INET, AF_INET6), protocol (IPPROTO_TCP, IPPROTO_UDP),
/// state (TCP's; UDP's connected ones are "established"), addresses and ports (in `id`, network order), its
/// owner's uid, and the id of the cgroup it was made in (0 when the kernel does not say).
struct herald_socket_entry {
    unsigned long long inode;
    unsigned long long cgroup_id;
    unsigned int uid;
    unsigned char family;
    unsigned char protocol;
    unsigned char state;
    struct inet_diag_sockid id;
};

/// Finds, among the TCP and UDP sockets of heraldd's network namespace, those whose inode is one of `inodes`:
/// writes up to `capacity` of them to `out` and returns how many there are, or -1 with errno.
long herald_sockets_find(const unsigned long long *inodes, size_t inode_count, struct herald_socket_entry *out,
                         size_t capacity);

/// Ends the socket `entry` (SOCK_DESTROY: its owner's next call fails with ECONNABORTED, a TCP peer gets a reset).
/// Needs CAP_NET_ADMIN and a kernel with CONFIG_INET_DIAG_DESTROY. 0, or -1 with errno.
int herald_socket_destroy(const struct herald_socket_entry *entry);

/// The ids of the ingress programs attached to the cgroup at `cgroup_path` itself (BPF_PROG_QUERY): writes up to
/// `capacity` of them to `ids` and returns how many there are, or -1 with errno.
int herald_bpf_ingress_programs(const char *cgroup_path, unsigned int *ids, unsigned int capacity);

/// The cookie of this process's network namespace (SO_NETNS_COOKIE, Linux 5.14+), or 0 when unknown.
unsigned long long herald_netns_cookie(void);

#endif
