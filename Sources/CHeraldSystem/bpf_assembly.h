// What the BPF programs of kernel enforcement share: the bpf(2) call and one instruction at a time. The
// programs are assembled by hand so that heraldd needs no compiler and no libbpf at run time.
#ifndef HERALD_BPF_ASSEMBLY_H
#define HERALD_BPF_ASSEMBLY_H

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long herald_bpf(int command, union bpf_attr *attr) {
    return syscall(SYS_bpf, command, attr, sizeof *attr);
}

static inline struct bpf_insn herald_insn(unsigned char code, unsigned char dst, unsigned char src, short offset,
                                          int imm) {
    struct bpf_insn insn;
    memset(&insn, 0, sizeof insn);
    insn.code = code;
    insn.dst_reg = dst;
    insn.src_reg = src;
    insn.off = offset;
    insn.imm = imm;
    return insn;
}

/// Loads a program of `type` for `attach` (GPL, as the helpers it calls need); `log` (may be NULL) receives the
/// verifier's words, and a log too small for them is dropped rather than failing the load. The descriptor, or -1
/// with errno.
static inline int herald_bpf_load(enum bpf_prog_type type, enum bpf_attach_type attach, const struct bpf_insn *insns,
                                  size_t count, const char *name, char *log, size_t log_size) {
    static const char license[] = "GPL";
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.prog_type = type;
    attr.expected_attach_type = attach;
    attr.insns = (unsigned long long)(unsigned long)insns;
    attr.insn_cnt = (unsigned int)count;
    attr.license = (unsigned long long)(unsigned long)license;
    strncpy(attr.prog_name, name, sizeof attr.prog_name - 1);
    if (log && log_size > 0) {
        log[0] = 0;
        attr.log_buf = (unsigned long long)(unsigned long)log;
        attr.log_size = (unsigned int)log_size;
        attr.log_level = 1;
    }
    int fd = (int)herald_bpf(BPF_PROG_LOAD, &attr);
    if (fd < 0 && errno == ENOSPC && log) {
        attr.log_buf = 0;
        attr.log_size = 0;
        attr.log_level = 0;
        fd = (int)herald_bpf(BPF_PROG_LOAD, &attr);
    }
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

/// Attaches `program_fd` at `attach_type` of the cgroup v2 directory `cgroup_path` through a BPF link, which
/// detaches it when closed (by close() or by the process's end). -1 with errno on failure.
static inline int herald_bpf_link_cgroup(int program_fd, const char *cgroup_path, enum bpf_attach_type attach_type) {
    int cgroup = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cgroup < 0) return -1;
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.link_create.prog_fd = (unsigned int)program_fd;
    attr.link_create.target_fd = (unsigned int)cgroup;
    attr.link_create.attach_type = attach_type;
    int link = (int)herald_bpf(BPF_LINK_CREATE, &attr);
    int saved = errno;
    close(cgroup);
    errno = saved;
    if (link >= 0) fcntl(link, F_SETFD, FD_CLOEXEC);
    return link;
}

#endif
