/* What a hostile local user can try against heraldd's sockets, one mode per attack (HostileUserTests.swift).
 * It speaks the dnssd IPC protocol (version 1) and the control protocol directly, so that it can do what no
 * client library does: hand a connection to another process, exec on it, drop privileges after connecting,
 * hold connections, never read replies.
 *
 *   attacker request SOCKET OP TYPE [NAME]           OP: browse, resolve or register; prints "status N" and replies
 *   attacker borrow SOCKET PROGRAM TYPE NAME          connect, fork; the connecting process execs PROGRAM (a granted
 *                                                     app, made to wait) and is stopped; the child asks on the socket
 *   attacker handoff SOCKET TYPE NAME exit|exec       register, then the connecting process exits (or execs sleep)
 *                                                     while a child keeps the connection and prints what comes
 *   attacker drop SOCKET UID OP TYPE                  connect as root, drop to UID, then ask
 *   attacker drop-control SOCKET UID LINE             connect to the control socket as root, drop to UID, send LINE
 *   attacker hold SOCKET N SECONDS                    open N connections, ask each for DaemonVersion, keep them
 *   attacker flood SOCKET N REQUESTS SECONDS          N connections that send REQUESTS property requests each and
 *                                                     never read
 *   attacker park SOCKET CONNECTIONS PER TYPE SECONDS CONNECTIONS shared connections with PER browses each
 *   attacker nss-hold SOCKET N SECONDS                open N idle connections to the NSS socket
 *   attacker control-hold SOCKET N SECONDS            open N connections to the control socket, send `status` on
 *                                                     each, count those answered, keep them
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OP_CONNECTION = 1, OP_REGISTER = 5, OP_BROWSE = 6, OP_RESOLVE = 7, OP_PROPERTY = 13 };

static int connect_to(const char *path, int quiet) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        if (!quiet) perror("connect");
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static void put32(unsigned char *at, uint32_t value) {
    uint32_t big = htonl(value);
    memcpy(at, &big, 4);
}

static uint32_t get32(const unsigned char *at) {
    uint32_t big;
    memcpy(&big, at, 4);
    return ntohl(big);
}

static size_t put_string(unsigned char *at, const char *text) {
    size_t length = strlen(text) + 1;
    memcpy(at, text, length);
    return length;
}

/* Builds one request frame: header, then the body. Returns its length. */
static size_t frame(unsigned char *out, uint32_t op, uint32_t ipc_flags, uint32_t context, const char *type,
                    const char *name) {
    unsigned char *body = out + 28;
    size_t length = 0;
    switch (op) {
    case OP_CONNECTION:
        break;
    case OP_PROPERTY:
        length += put_string(body, "HeraldPermissionExplanation");
        break;
    case OP_BROWSE:
        memset(body, 0, 8);
        length = 8;
        length += put_string(body + length, type);
        length += put_string(body + length, "");
        break;
    case OP_RESOLVE:
        memset(body, 0, 8);
        length = 8;
        length += put_string(body + length, name);
        length += put_string(body + length, type);
        length += put_string(body + length, "");
        break;
    case OP_REGISTER:
        memset(body, 0, 8);
        length = 8;
        length += put_string(body + length, name);
        length += put_string(body + length, type);
        length += put_string(body + length, "");
        length += put_string(body + length, "");
        body[length++] = 0x1F; /* port 8080, network order */
        body[length++] = 0x90;
        body[length++] = 0;    /* TXT length 8: one string, "secret=" */
        body[length++] = 8;
        memcpy(body + length, "\x07secret=", 8);
        length += 8;
        break;
    }
    memset(out, 0, 28);
    put32(out, 1);
    put32(out + 4, (uint32_t)length);
    put32(out + 8, ipc_flags);
    put32(out + 12, op);
    put32(out + 16, context);
    return 28 + length;
}

static int write_all(int fd, const unsigned char *bytes, size_t count) {
    while (count > 0) {
        ssize_t written = write(fd, bytes, count);
        if (written <= 0) return -1;
        bytes += written;
        count -= (size_t)written;
    }
    return 0;
}

/* Reads exactly count bytes within timeout_ms; 0 on success, -1 on end or timeout. */
static int read_exactly(int fd, unsigned char *out, size_t count, int timeout_ms) {
    size_t got = 0;
    while (got < count) {
        struct pollfd entry = { .fd = fd, .events = POLLIN };
        if (poll(&entry, 1, timeout_ms) <= 0) return -1;
        ssize_t n = read(fd, out + got, count - got);
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

static int op_named(const char *name) {
    if (strcmp(name, "browse") == 0) return OP_BROWSE;
    if (strcmp(name, "resolve") == 0) return OP_RESOLVE;
    if (strcmp(name, "register") == 0) return OP_REGISTER;
    return -1;
}

/* Sends one request as the connection's first and prints its status, then every reply for `seconds`. */
static int ask(int fd, int op, const char *type, const char *name, int seconds) {
    unsigned char out[1024];
    size_t length = frame(out, (uint32_t)op, 0, 1, type, name ? name : "Secret Game");
    if (write_all(fd, out, length) != 0) {
        printf("closed\n");
        return 0;
    }
    unsigned char status[4];
    if (read_exactly(fd, status, 4, 5000) != 0) {
        printf("closed\n");
        fflush(stdout);
        return 0;
    }
    printf("status %d\n", (int32_t)get32(status));
    fflush(stdout);
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        unsigned char header[28];
        if (read_exactly(fd, header, 28, 500) != 0) continue;
        uint32_t datalen = get32(header + 4);
        if (datalen > 65536) break;
        unsigned char *body = malloc(datalen + 1);
        if (read_exactly(fd, body, datalen, 2000) != 0) {
            free(body);
            break;
        }
        body[datalen] = 0;
        int32_t error = datalen >= 12 ? (int32_t)get32(body + 8) : 0;
        const char *text = datalen > 12 ? (const char *)body + 12 : "";
        printf("reply op %u error %d name %s\n", get32(header + 12), error, text);
        fflush(stdout);
        free(body);
    }
    return 0;
}

static int request_mode(int argc, char **argv) {
    if (argc < 5) return 64;
    int op = op_named(argv[3]);
    int fd = connect_to(argv[2], 0);
    if (fd < 0 || op < 0) return 3;
    return ask(fd, op, argv[4], argc > 5 ? argv[5] : NULL, 3);
}

static int borrow(int argc, char **argv) {
    if (argc < 6) return 64;
    int fd = connect_to(argv[2], 0);
    if (fd < 0) return 3;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        usleep(400000); /* the connecting process has exec'd the granted app by now */
        kill(parent, SIGSTOP);
        for (int op = 0; op < 3; op++) {
            static const char *const ops[] = { "browse", "resolve", "register" };
            printf("%s: ", ops[op]);
            unsigned char out[1024];
            uint32_t code = (uint32_t)op_named(ops[op]);
            /* The first request on the connection is in band; the others use no error socket. */
            size_t length = frame(out, code, op == 0 ? 0 : 4, (uint32_t)(10 + op), argv[4], argv[5]);
            if (write_all(fd, out, length) != 0) {
                printf("closed\n");
                continue;
            }
            if (op == 0) {
                unsigned char status[4];
                if (read_exactly(fd, status, 4, 5000) != 0) {
                    printf("closed\n");
                    continue;
                }
                printf("status %d\n", (int32_t)get32(status));
            } else {
                printf("sent\n");
            }
            fflush(stdout);
        }
        time_t end = time(NULL) + 3;
        while (time(NULL) < end) {
            unsigned char header[28];
            if (read_exactly(fd, header, 28, 500) != 0) continue;
            uint32_t datalen = get32(header + 4);
            if (datalen > 65536) break;
            unsigned char body[65537];
            if (read_exactly(fd, body, datalen, 2000) != 0) break;
            body[datalen] = 0;
            printf("reply op %u error %d name %s\n", get32(header + 12), datalen >= 12 ? (int32_t)get32(body + 8) : 0,
                   datalen > 12 ? (const char *)body + 12 : "");
            fflush(stdout);
        }
        kill(parent, SIGKILL);
        return 0;
    }
    /* The app's own output (its browse finds the peer) is not the attacker's. */
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    char wait_arg[] = "20";
    execl(argv[3], argv[3], "browse", argv[4], "--timeout", wait_arg, "--socket", argv[2], (char *)NULL);
    perror("exec");
    return 2;
}

static int handoff(int argc, char **argv) {
    if (argc < 6) return 64;
    int fd = connect_to(argv[2], 0);
    if (fd < 0) return 3;
    unsigned char out[1024];
    size_t length = frame(out, OP_REGISTER, 0, 1, argv[3], argv[4]);
    if (write_all(fd, out, length) != 0) return 4;
    unsigned char status[4];
    if (read_exactly(fd, status, 4, 5000) != 0) return 5;
    printf("status %d\n", (int32_t)get32(status));
    fflush(stdout);
    /* Wait for the registration's reply: the service is on the network. */
    unsigned char header[28];
    if (read_exactly(fd, header, 28, 5000) == 0) {
        uint32_t datalen = get32(header + 4);
        unsigned char body[65537];
        if (datalen <= 65536 && read_exactly(fd, body, datalen, 2000) == 0 && datalen >= 12) {
            printf("registered error %d\n", (int32_t)get32(body + 8));
            fflush(stdout);
        }
    }
    pid_t child = fork();
    if (child == 0) {
        time_t end = time(NULL) + 8;
        while (time(NULL) < end) {
            if (read_exactly(fd, header, 28, 500) != 0) continue;
            uint32_t datalen = get32(header + 4);
            unsigned char body[65537];
            if (datalen > 65536 || read_exactly(fd, body, datalen, 2000) != 0) break;
            printf("child reply op %u error %d\n", get32(header + 12), datalen >= 12 ? (int32_t)get32(body + 8) : 0);
            fflush(stdout);
        }
        return 0;
    }
    if (strcmp(argv[5], "exec") == 0) {
        execl("/bin/sleep", "sleep", "10", (char *)NULL);
        return 2;
    }
    _exit(0);
}

static int drop_to(const char *uid_text) {
    uid_t uid = (uid_t)atoi(uid_text);
    if (setgroups(0, NULL) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) {
        perror("drop");
        return -1;
    }
    return 0;
}

static int drop(int argc, char **argv) {
    if (argc < 6) return 64;
    int fd = connect_to(argv[2], 0);
    if (fd < 0) return 3;
    if (drop_to(argv[3]) != 0) return 6;
    int op = op_named(argv[4]);
    if (op < 0) return 64;
    return ask(fd, op, argv[5], NULL, 2);
}

static int drop_control(int argc, char **argv) {
    if (argc < 5) return 64;
    int fd = connect_to(argv[2], 0);
    if (fd < 0) return 3;
    if (drop_to(argv[3]) != 0) return 6;
    char line[4096];
    snprintf(line, sizeof(line), "%s\n", argv[4]);
    if (write_all(fd, (const unsigned char *)line, strlen(line)) != 0) return 4;
    char reply[65536];
    size_t got = 0;
    while (got < sizeof(reply) - 1) {
        struct pollfd entry = { .fd = fd, .events = POLLIN };
        if (poll(&entry, 1, 5000) <= 0) break;
        ssize_t n = read(fd, reply + got, 1);
        if (n <= 0 || reply[got] == '\n') break;
        got += (size_t)n;
    }
    reply[got] = 0;
    printf("reply %s\n", reply);
    return 0;
}

static int hold(int argc, char **argv) {
    if (argc < 5) return 64;
    int count = atoi(argv[3]), served = 0, refused = 0;
    for (int i = 0; i < count; i++) {
        int fd = connect_to(argv[2], 1);
        if (fd < 0) {
            refused++;
            continue;
        }
        unsigned char out[64];
        /* DaemonVersion, answered raw: status, length, value. */
        unsigned char *body = out + 28;
        size_t length = put_string(body, "DaemonVersion");
        memset(out, 0, 28);
        put32(out, 1);
        put32(out + 4, (uint32_t)length);
        put32(out + 12, OP_PROPERTY);
        unsigned char reply[12];
        if (write_all(fd, out, 28 + length) == 0 && read_exactly(fd, reply, 12, 3000) == 0) {
            served++;
        } else {
            refused++;
            close(fd);
        }
    }
    printf("served %d refused %d\n", served, refused);
    fflush(stdout);
    sleep((unsigned)atoi(argv[4]));
    return 0;
}

static int flood(int argc, char **argv) {
    if (argc < 6) return 64;
    int count = atoi(argv[3]), requests = atoi(argv[4]), open_count = 0;
    unsigned char out[128];
    size_t length = frame(out, OP_PROPERTY, 0, 0, "", "");
    for (int i = 0; i < count; i++) {
        int fd = connect_to(argv[2], 1);
        if (fd < 0) continue;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        int sent = 0;
        for (; sent < requests; sent++) {
            if (write(fd, out, length) != (ssize_t)length) break;
        }
        open_count++;
    }
    printf("connections %d\n", open_count);
    fflush(stdout);
    sleep((unsigned)atoi(argv[5]));
    return 0;
}

static int park(int argc, char **argv) {
    if (argc < 7) return 64;
    int connections = atoi(argv[3]), per = atoi(argv[4]), accepted = 0;
    for (int c = 0; c < connections; c++) {
        int fd = connect_to(argv[2], 1);
        if (fd < 0) continue;
        unsigned char out[1024];
        size_t length = frame(out, OP_CONNECTION, 0, 0, "", "");
        unsigned char status[4];
        if (write_all(fd, out, length) != 0 || read_exactly(fd, status, 4, 3000) != 0) continue;
        for (int i = 0; i < per; i++) {
            length = frame(out, OP_BROWSE, 4, (uint32_t)(i + 1), argv[5], "");
            if (write_all(fd, out, length) != 0) break;
            accepted++;
        }
        /* Replies (NoAuth for each parked browse) are read away so that the test measures operations, not buffers. */
        int drain = fork();
        if (drain == 0) {
            unsigned char junk[65536];
            while (read(fd, junk, sizeof(junk)) > 0) {}
            _exit(0);
        }
    }
    printf("sent %d\n", accepted);
    fflush(stdout);
    sleep((unsigned)atoi(argv[6]));
    return 0;
}

static int nss_hold(int argc, char **argv) {
    if (argc < 5) return 64;
    int count = atoi(argv[3]), open_count = 0;
    for (int i = 0; i < count; i++) {
        if (connect_to(argv[2], 1) >= 0) open_count++;
    }
    printf("connections %d\n", open_count);
    fflush(stdout);
    sleep((unsigned)atoi(argv[4]));
    return 0;
}

static int control_hold(int argc, char **argv) {
    if (argc < 5) return 64;
    int count = atoi(argv[3]), answered = 0, closed = 0;
    const char *line = "{\"version\":1,\"id\":1,\"command\":\"status\"}\n";
    for (int i = 0; i < count; i++) {
        int fd = connect_to(argv[2], 1);
        if (fd < 0) {
            closed++;
            continue;
        }
        char byte;
        if (write_all(fd, (const unsigned char *)line, strlen(line)) == 0
            && read_exactly(fd, (unsigned char *)&byte, 1, 3000) == 0) {
            answered++;
        } else {
            closed++;
        }
    }
    printf("answered %d closed %d\n", answered, closed);
    fflush(stdout);
    sleep((unsigned)atoi(argv[4]));
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2) {
        if (strcmp(argv[1], "request") == 0) return request_mode(argc, argv);
        if (strcmp(argv[1], "borrow") == 0) return borrow(argc, argv);
        if (strcmp(argv[1], "handoff") == 0) return handoff(argc, argv);
        if (strcmp(argv[1], "drop") == 0) return drop(argc, argv);
        if (strcmp(argv[1], "drop-control") == 0) return drop_control(argc, argv);
        if (strcmp(argv[1], "hold") == 0) return hold(argc, argv);
        if (strcmp(argv[1], "flood") == 0) return flood(argc, argv);
        if (strcmp(argv[1], "park") == 0) return park(argc, argv);
        if (strcmp(argv[1], "nss-hold") == 0) return nss_hold(argc, argv);
        if (strcmp(argv[1], "control-hold") == 0) return control_hold(argc, argv);
    }
    fprintf(stderr, "usage: see the comment at the top of attacker.c\n");
    return 64;
}
