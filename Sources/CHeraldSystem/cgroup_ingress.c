// The cgroup BPF ingress program of kernel enforcement (docs/enforcement.md, "Incoming multicast and broadcast"):
// a few instructions, assembled here, that the kernel runs for each socket a packet is delivered to, in the
// cgroups heraldd attaches it to. It drops multicast and broadcast packets, except for the sockets of operators
// and sockets of other network namespaces, and lets everything else through (the nftables rules judge unicast).
#include "CHeraldSystem.h"
#include "bpf_assembly.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// The most operators the program names (each one compare).
#define HERALD_INGRESS_MAX_UIDS 64

int herald_bpf_ingress_load(const unsigned int *operator_uids, size_t uid_count, unsigned long long netns_cookie,
                            unsigned long long only_cgroup_id, char *log, size_t log_size) {
    if (uid_count > HERALD_INGRESS_MAX_UIDS) {
        errno = E2BIG;
        return -1;
    }
    struct bpf_insn program[40 + HERALD_INGRESS_MAX_UIDS];
    size_t n = 0;
    const unsigned char ld32 = BPF_LDX | BPF_MEM | BPF_W;
    // r6 = the context (struct __sk_buff); r2 = skb->pkt_type.
    program[n++] = herald_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
    program[n++] = herald_insn(ld32, BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, pkt_type), 0);
    // Broadcast (1) or multicast (2): judged below; anything else passes.
    program[n++] = herald_insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_2, 0, 2, 1 /* PACKET_BROADCAST */);
    program[n++] = herald_insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_2, 0, 1, 2 /* PACKET_MULTICAST */);
    size_t pass_early = n;
    program[n++] = herald_insn(BPF_JMP | BPF_JA, 0, 0, 0, 0); // to "pass", patched below
    size_t to_pass[3 + HERALD_INGRESS_MAX_UIDS];
    size_t jumps = 0;
    to_pass[jumps++] = pass_early;
    if (only_cgroup_id != 0) {
        // Attached at the root for the sockets of the root cgroup itself: a socket of any other cgroup passes.
        program[n++] = herald_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0);
        program[n++] = herald_insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_cgroup_id);
        program[n++] = herald_insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, 0, 0, (int)(unsigned int)only_cgroup_id);
        program[n++] = herald_insn(0, 0, 0, 0, (int)(unsigned int)(only_cgroup_id >> 32));
        to_pass[jumps++] = n;
        program[n++] = herald_insn(BPF_JMP | BPF_JNE | BPF_X, BPF_REG_0, BPF_REG_1, 0, 0);
    }
    if (netns_cookie != 0) {
        // A socket of another network namespace (another LAN) is not heraldd's to judge.
        program[n++] = herald_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0);
        program[n++] = herald_insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_netns_cookie);
        program[n++] = herald_insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, 0, 0, (int)(unsigned int)netns_cookie);
        program[n++] = herald_insn(0, 0, 0, 0, (int)(unsigned int)(netns_cookie >> 32));
        to_pass[jumps++] = n;
        program[n++] = herald_insn(BPF_JMP | BPF_JNE | BPF_X, BPF_REG_0, BPF_REG_1, 0, 0);
    }
    if (uid_count > 0) {
        // The receiving socket's owner: operators keep everything.
        program[n++] = herald_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0);
        program[n++] = herald_insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_socket_uid);
        for (size_t i = 0; i < uid_count; i++) {
            to_pass[jumps++] = n;
            program[n++] = herald_insn(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, (int)operator_uids[i]);
        }
    }
    // Drop.
    program[n++] = herald_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
    program[n++] = herald_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    size_t pass = n;
    program[n++] = herald_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
    program[n++] = herald_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    for (size_t i = 0; i < jumps; i++) program[to_pass[i]].off = (short)(pass - to_pass[i] - 1);

    return herald_bpf_load(BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS, program, n,
                           HERALD_INGRESS_PROGRAM_NAME, log, log_size);
}

int herald_bpf_cgroup_link(int program_fd, const char *cgroup_path) {
    return herald_bpf_link_cgroup(program_fd, cgroup_path, BPF_CGROUP_INET_INGRESS);
}

unsigned int herald_bpf_program_id(int program_fd) {
    struct bpf_prog_info info;
    memset(&info, 0, sizeof info);
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.info.bpf_fd = (unsigned int)program_fd;
    attr.info.info_len = sizeof info;
    attr.info.info = (unsigned long long)(unsigned long)&info;
    if (herald_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) != 0) return 0;
    return info.id;
}

int herald_bpf_ingress_programs(const char *cgroup_path, unsigned int *ids, unsigned int capacity) {
    int cgroup = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cgroup < 0) return -1;
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.query.target_fd = (unsigned int)cgroup;
    attr.query.attach_type = BPF_CGROUP_INET_INGRESS;
    attr.query.prog_ids = (unsigned long long)(unsigned long)ids;
    attr.query.prog_cnt = capacity;
    long status = herald_bpf(BPF_PROG_QUERY, &attr);
    int saved = errno;
    close(cgroup);
    errno = saved;
    return status == 0 ? (int)attr.query.prog_cnt : -1;
}

unsigned long long herald_netns_cookie(void) {
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe < 0) return 0;
    unsigned long long cookie = 0;
    socklen_t length = sizeof cookie;
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
    if (getsockopt(probe, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &length) != 0) cookie = 0;
    close(probe);
    return cookie;
}

int herald_bpf_pin(int fd, const char *path) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.bpf_fd = (unsigned int)fd;
    attr.pathname = (unsigned long long)(unsigned long)path;
    return (int)herald_bpf(BPF_OBJ_PIN, &attr);
}

int herald_bpf_pinned(const char *path) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.pathname = (unsigned long long)(unsigned long)path;
    int fd = (int)herald_bpf(BPF_OBJ_GET, &attr);
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}
