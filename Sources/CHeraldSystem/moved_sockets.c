// The moved-socket programs of kernel enforcement (docs/enforcement.md, "Sockets made before a process moved").
// The nftables rules judge a socket by the cgroup it was made in. A process moved into a held-back app's cgroup
// keeps its earlier sockets, and with them the standing of the cgroup it came from. These programs, attached at
// the root of the hierarchy, close that gap at connect() and sendmsg():
//
// - at socket creation, the socket's cookie is recorded with the creating process's cgroup (the origin map), and
//   forgotten when the socket is released;
// - at connect() and at sendmsg() with an address, the calling process's cgroup and the socket's origin are
//   looked up in the standing map (0: the LAN is open, 1: multicast and broadcast are held back, 2: the whole LAN
//   is); when the caller stands lower than the socket's origin, the call is refused (EPERM) for destinations the
//   caller's standing holds back. Loopback and port 53 always pass.
#include "CHeraldSystem.h"
#include "bpf_assembly.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#define MAX_UIDS 64
#define MAX_INSNS (96 + MAX_UIDS)

// A program under assembly: instructions, and forward jumps to labels resolved at the end.
struct assembly {
    struct bpf_insn insns[MAX_INSNS];
    size_t count;
    size_t jumps[48];
    int jump_labels[48];
    size_t jump_count;
    long labels[8];
};

enum { LABEL_PASS, LABEL_REFUSE, LABEL_V4, LABEL_GROUP, LABEL_UNICAST, LABEL_COUNT };

static void emit(struct assembly *a, struct bpf_insn insn) {
    if (a->count < MAX_INSNS) a->insns[a->count] = insn;
    a->count++;
}

// A conditional or unconditional jump to `label`.
static void jump(struct assembly *a, unsigned char code, unsigned char dst, unsigned char src, int imm, int label) {
    if (a->jump_count < sizeof a->jumps / sizeof a->jumps[0]) {
        a->jumps[a->jump_count] = a->count;
        a->jump_labels[a->jump_count] = label;
    }
    a->jump_count++;
    emit(a, herald_insn(code, dst, src, 0, imm));
}

static void place(struct assembly *a, int label) { a->labels[label] = (long)a->count; }

static int resolve(struct assembly *a) {
    if (a->count > MAX_INSNS || a->jump_count > sizeof a->jumps / sizeof a->jumps[0]) return -1;
    for (size_t i = 0; i < a->jump_count; i++) {
        long target = a->labels[a->jump_labels[i]];
        if (target < 0) return -1;
        a->insns[a->jumps[i]].off = (short)(target - (long)a->jumps[i] - 1);
    }
    return 0;
}

static void load_map(struct assembly *a, unsigned char dst, int map_fd) {
    emit(a, herald_insn(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, map_fd));
    emit(a, herald_insn(0, 0, 0, 0, 0));
}

static void call(struct assembly *a, int helper) { emit(a, herald_insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper)); }

static void move(struct assembly *a, unsigned char dst, unsigned char src) {
    emit(a, herald_insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0));
}

static void move_imm(struct assembly *a, unsigned char dst, int imm) {
    emit(a, herald_insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm));
}

// Jumps to `label` when the program runs for a socket of another network namespace (needs r6 = context).
static void skip_other_namespaces(struct assembly *a, unsigned long long netns_cookie, int label) {
    if (netns_cookie == 0) return;
    move(a, BPF_REG_1, BPF_REG_6);
    call(a, BPF_FUNC_get_netns_cookie);
    emit(a, herald_insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, 0, 0, (int)(unsigned int)netns_cookie));
    emit(a, herald_insn(0, 0, 0, 0, (int)(unsigned int)(netns_cookie >> 32)));
    jump(a, BPF_JMP | BPF_JNE | BPF_X, BPF_REG_0, BPF_REG_1, 0, label);
}

// r`dst` = the standing of the cgroup id at r10 - 8: the map's value, or `fallback` when it has none.
static void standing_of_key(struct assembly *a, unsigned char dst, int standing_map, int fallback) {
    load_map(a, BPF_REG_1, standing_map);
    move(a, BPF_REG_2, BPF_REG_10);
    emit(a, herald_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8));
    call(a, BPF_FUNC_map_lookup_elem);
    move_imm(a, dst, fallback);
    emit(a, herald_insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0));
    emit(a, herald_insn(BPF_LDX | BPF_MEM | BPF_W, dst, BPF_REG_0, 0, 0));
}

static int load(struct assembly *a, enum bpf_prog_type type, enum bpf_attach_type attach, const char *name,
                char *log, size_t log_size) {
    if (resolve(a) != 0) {
        errno = E2BIG;
        return -1;
    }
    return herald_bpf_load(type, attach, a->insns, a->count, name, log, log_size);
}

static void init_assembly(struct assembly *a) {
    memset(a, 0, sizeof *a);
    for (int i = 0; i < 8; i++) a->labels[i] = -1;
}

// At socket creation (`release` false): origin[cookie] = the creating process's cgroup. At release: forgotten.
static int load_origin_program(int origin_map, int release, unsigned long long netns_cookie, char *log,
                               size_t log_size) {
    struct assembly a;
    init_assembly(&a);
    move(&a, BPF_REG_6, BPF_REG_1);
    skip_other_namespaces(&a, netns_cookie, LABEL_PASS);
    move(&a, BPF_REG_1, BPF_REG_6);
    call(&a, BPF_FUNC_get_socket_cookie);
    emit(&a, herald_insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0));
    if (release) {
        load_map(&a, BPF_REG_1, origin_map);
        move(&a, BPF_REG_2, BPF_REG_10);
        emit(&a, herald_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8));
        call(&a, BPF_FUNC_map_delete_elem);
    } else {
        call(&a, BPF_FUNC_get_current_cgroup_id);
        emit(&a, herald_insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -16, 0));
        load_map(&a, BPF_REG_1, origin_map);
        move(&a, BPF_REG_2, BPF_REG_10);
        emit(&a, herald_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8));
        move(&a, BPF_REG_3, BPF_REG_10);
        emit(&a, herald_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -16));
        move_imm(&a, BPF_REG_4, BPF_ANY);
        call(&a, BPF_FUNC_map_update_elem);
    }
    place(&a, LABEL_PASS);
    move_imm(&a, BPF_REG_0, 1);
    emit(&a, herald_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    return load(&a, BPF_PROG_TYPE_CGROUP_SOCK,
                release ? BPF_CGROUP_INET_SOCK_RELEASE : BPF_CGROUP_INET_SOCK_CREATE,
                release ? "herald_sock_end" : "herald_sock_new", log, log_size);
}

// At connect() or sendmsg() (`attach`): refuses a moved socket's call when its caller stands lower.
static int load_address_program(enum bpf_attach_type attach, int standing_map, int origin_map,
                                 const unsigned int *operator_uids, size_t uid_count,
                                 unsigned long long netns_cookie, unsigned int fallback, char *log, size_t log_size) {
    int ipv6 = attach == BPF_CGROUP_INET6_CONNECT || attach == BPF_CGROUP_UDP6_SENDMSG;
    const unsigned char ld32 = BPF_LDX | BPF_MEM | BPF_W;
    struct assembly a;
    init_assembly(&a);
    move(&a, BPF_REG_6, BPF_REG_1);
    skip_other_namespaces(&a, netns_cookie, LABEL_PASS);
    if (uid_count > 0) {
        // Operators are never held back (the uid is the low half of the helper's value).
        call(&a, BPF_FUNC_get_current_uid_gid);
        for (size_t i = 0; i < uid_count; i++) {
            jump(&a, BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_0, 0, (int)operator_uids[i], LABEL_PASS);
        }
    }
    // r7 = the caller's cgroup, r8 = its standing; a caller with the LAN open is not judged here.
    call(&a, BPF_FUNC_get_current_cgroup_id);
    move(&a, BPF_REG_7, BPF_REG_0);
    emit(&a, herald_insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, -8, 0));
    standing_of_key(&a, BPF_REG_8, standing_map, (int)fallback);
    jump(&a, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_8, 0, 0, LABEL_PASS);
    // The socket's origin: unknown (made before heraldd started) or the caller's own cgroup passes; nft judges it.
    move(&a, BPF_REG_1, BPF_REG_6);
    call(&a, BPF_FUNC_get_socket_cookie);
    emit(&a, herald_insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -16, 0));
    load_map(&a, BPF_REG_1, origin_map);
    move(&a, BPF_REG_2, BPF_REG_10);
    emit(&a, herald_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16));
    call(&a, BPF_FUNC_map_lookup_elem);
    jump(&a, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, LABEL_PASS);
    emit(&a, herald_insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0));
    jump(&a, BPF_JMP | BPF_JEQ | BPF_X, BPF_REG_1, BPF_REG_7, 0, LABEL_PASS);
    emit(&a, herald_insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, -8, 0));
    // r9 = the origin's standing: as strict as the caller's or stricter, and nft holds the socket back already.
    standing_of_key(&a, BPF_REG_9, standing_map, (int)fallback);
    jump(&a, BPF_JMP | BPF_JGE | BPF_X, BPF_REG_9, BPF_REG_8, 0, LABEL_PASS);
    // The LAN's DNS servers stay reachable.
    emit(&a, herald_insn(ld32, BPF_REG_2, BPF_REG_6, offsetof(struct bpf_sock_addr, user_port), 0));
    jump(&a, BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_2, 0, 0x3500 /* htons(53) */, LABEL_PASS);
    if (ipv6) {
        // Words of the address as loaded (network order, so the first byte is the lowest).
        emit(&a, herald_insn(ld32, BPF_REG_2, BPF_REG_6, offsetof(struct bpf_sock_addr, user_ip6[0]), 0));
        emit(&a, herald_insn(ld32, BPF_REG_3, BPF_REG_6, offsetof(struct bpf_sock_addr, user_ip6[1]), 0));
        emit(&a, herald_insn(ld32, BPF_REG_4, BPF_REG_6, offsetof(struct bpf_sock_addr, user_ip6[2]), 0));
        emit(&a, herald_insn(ld32, BPF_REG_5, BPF_REG_6, offsetof(struct bpf_sock_addr, user_ip6[3]), 0));
        // ff00::/8 is multicast.
        move(&a, BPF_REG_1, BPF_REG_2);
        emit(&a, herald_insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, 0xff));
        jump(&a, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0xff, LABEL_GROUP);
        jump(&a, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 0, LABEL_UNICAST);
        jump(&a, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 0, LABEL_UNICAST);
        // ::1 is loopback.
        emit(&a, herald_insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 1, 0));
        jump(&a, BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_5, 0, 0x01000000, LABEL_PASS);
        // ::ffff:a.b.c.d is judged as a.b.c.d.
        jump(&a, BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_4, 0, (int)0xffff0000u, LABEL_UNICAST);
        move(&a, BPF_REG_2, BPF_REG_5);
        jump(&a, BPF_JMP | BPF_JA, 0, 0, 0, LABEL_V4);
    } else {
        emit(&a, herald_insn(ld32, BPF_REG_2, BPF_REG_6, offsetof(struct bpf_sock_addr, user_ip4), 0));
    }
    place(&a, LABEL_V4);
    // 127.0.0.0/8 is loopback; 224.0.0.0/4 multicast; 255.255.255.255 broadcast.
    move(&a, BPF_REG_1, BPF_REG_2);
    emit(&a, herald_insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, 0xff));
    jump(&a, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 127, LABEL_PASS);
    emit(&a, herald_insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, 0xf0));
    jump(&a, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0xe0, LABEL_GROUP);
    jump(&a, BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_2, 0, -1, LABEL_GROUP);
    place(&a, LABEL_UNICAST);
    // Any other address is held back only where the whole LAN is.
    jump(&a, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_8, 0, 2, LABEL_REFUSE);
    jump(&a, BPF_JMP | BPF_JA, 0, 0, 0, LABEL_PASS);
    place(&a, LABEL_GROUP);
    place(&a, LABEL_REFUSE);
    move_imm(&a, BPF_REG_0, 0);
    emit(&a, herald_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    place(&a, LABEL_PASS);
    move_imm(&a, BPF_REG_0, 1);
    emit(&a, herald_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    const char *name = attach == BPF_CGROUP_INET4_CONNECT   ? "herald_connect4"
                       : attach == BPF_CGROUP_INET6_CONNECT ? "herald_connect6"
                       : attach == BPF_CGROUP_UDP4_SENDMSG  ? "herald_sendmsg4"
                                                            : "herald_sendmsg6";
    return load(&a, BPF_PROG_TYPE_CGROUP_SOCK_ADDR, attach, name, log, log_size);
}

static const enum bpf_attach_type attach_types[HERALD_MOVED_PROGRAMS] = {
    BPF_CGROUP_INET_SOCK_CREATE, BPF_CGROUP_INET_SOCK_RELEASE, BPF_CGROUP_INET4_CONNECT,
    BPF_CGROUP_INET6_CONNECT,    BPF_CGROUP_UDP4_SENDMSG,      BPF_CGROUP_UDP6_SENDMSG,
};

static int create_map(const char *name, unsigned int value_size, unsigned int entries) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_type = BPF_MAP_TYPE_HASH;
    attr.key_size = 8;
    attr.value_size = value_size;
    attr.max_entries = entries;
    attr.map_flags = BPF_F_NO_PREALLOC;
    strncpy(attr.map_name, name, sizeof attr.map_name - 1);
    int fd = (int)herald_bpf(BPF_MAP_CREATE, &attr);
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

int herald_moved_maps_create(int *standing_map, int *origin_map) {
    *standing_map = create_map("herald_standing", 4, HERALD_MOVED_STANDING_ENTRIES);
    if (*standing_map < 0) return -1;
    *origin_map = create_map("herald_origin", 8, HERALD_MOVED_ORIGIN_ENTRIES);
    if (*origin_map < 0) {
        int saved = errno;
        close(*standing_map);
        *standing_map = -1;
        errno = saved;
        return -1;
    }
    return 0;
}

int herald_moved_programs_load(int standing_map, int origin_map, const unsigned int *operator_uids,
                               size_t uid_count, unsigned long long netns_cookie, unsigned int fallback,
                               int programs[HERALD_MOVED_PROGRAMS], char *log, size_t log_size) {
    if (uid_count > MAX_UIDS) {
        errno = E2BIG;
        return -1;
    }
    for (int i = 0; i < HERALD_MOVED_PROGRAMS; i++) programs[i] = -1;
    for (int i = 0; i < HERALD_MOVED_PROGRAMS; i++) {
        enum bpf_attach_type type = attach_types[i];
        if (type == BPF_CGROUP_INET_SOCK_CREATE || type == BPF_CGROUP_INET_SOCK_RELEASE) {
            programs[i] = load_origin_program(origin_map, type == BPF_CGROUP_INET_SOCK_RELEASE, netns_cookie, log,
                                              log_size);
        } else {
            programs[i] = load_address_program(type, standing_map, origin_map, operator_uids, uid_count,
                                               netns_cookie, fallback, log, log_size);
        }
        if (programs[i] < 0) {
            int saved = errno;
            for (int j = 0; j < i; j++) {
                close(programs[j]);
                programs[j] = -1;
            }
            errno = saved;
            return -1;
        }
    }
    return 0;
}

int herald_moved_programs_link(const int programs[HERALD_MOVED_PROGRAMS], const char *cgroup_path,
                               int links[HERALD_MOVED_PROGRAMS]) {
    for (int i = 0; i < HERALD_MOVED_PROGRAMS; i++) links[i] = -1;
    for (int i = 0; i < HERALD_MOVED_PROGRAMS; i++) {
        links[i] = herald_bpf_link_cgroup(programs[i], cgroup_path, attach_types[i]);
        if (links[i] < 0) {
            int saved = errno;
            for (int j = 0; j < i; j++) {
                close(links[j]);
                links[j] = -1;
            }
            errno = saved;
            return -1;
        }
    }
    return 0;
}

int herald_moved_standing_set(int standing_map, unsigned long long cgroup_id, unsigned int standing) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_fd = (unsigned int)standing_map;
    attr.key = (unsigned long long)(unsigned long)&cgroup_id;
    attr.value = (unsigned long long)(unsigned long)&standing;
    attr.flags = BPF_ANY;
    return (int)herald_bpf(BPF_MAP_UPDATE_ELEM, &attr);
}

int herald_moved_standing_remove(int standing_map, unsigned long long cgroup_id) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_fd = (unsigned int)standing_map;
    attr.key = (unsigned long long)(unsigned long)&cgroup_id;
    long status = herald_bpf(BPF_MAP_DELETE_ELEM, &attr);
    return status == 0 || errno == ENOENT ? 0 : -1;
}

long herald_moved_origin_count(int origin_map) {
    unsigned long long key = 0, next = 0;
    long count = 0;
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_fd = (unsigned int)origin_map;
    attr.key = 0;
    attr.next_key = (unsigned long long)(unsigned long)&next;
    while (herald_bpf(BPF_MAP_GET_NEXT_KEY, &attr) == 0) {
        count++;
        key = next;
        attr.key = (unsigned long long)(unsigned long)&key;
    }
    return errno == ENOENT ? count : -1;
}
