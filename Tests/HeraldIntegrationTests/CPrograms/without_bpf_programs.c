// Runs a command with bpf(2)'s BPF_PROG_LOAD failing with the errno given, as on a kernel that lacks a program
// type or a helper a program calls (the verifier refuses with EINVAL); every other bpf(2) command works.
//
//     without_bpf_programs ERRNO COMMAND [ARGUMENT...]
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: without_bpf_programs ERRNO COMMAND [ARGUMENT...]\n");
        return 2;
    }
    unsigned int error = (unsigned int)atoi(argv[1]) & SECCOMP_RET_DATA;
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bpf, 0, 3),
        // The command is the first argument (its low half on a little-endian machine).
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_PROG_LOAD, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | error),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("without_bpf_programs: seccomp");
        return 1;
    }
    execv(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
