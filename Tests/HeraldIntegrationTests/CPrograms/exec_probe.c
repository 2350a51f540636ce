/* A probe for the permission tests: sends one dnssd browse request for _tictactoe._tcp and prints the
 * status the daemon answers. "browse SOCKET" connects and asks; "connect-then-exec SOCKET PROGRAM" connects,
 * then execs PROGRAM with the open connection, and PROGRAM ("browse-on FD") asks on it: the request then
 * comes from another executable than the one that connected. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        perror("connect");
        exit(3);
    }
    return fd;
}

static void put32(unsigned char *at, uint32_t value) {
    uint32_t big = htonl(value);
    memcpy(at, &big, 4);
}

static int browse_on(int fd) {
    const char *type = "_tictactoe._tcp", *domain = "local.";
    unsigned char frame[128];
    size_t body = 8 + strlen(type) + 1 + strlen(domain) + 1;
    memset(frame, 0, sizeof(frame));
    put32(frame, 1);                 /* version */
    put32(frame + 4, (uint32_t)body); /* datalen */
    put32(frame + 8, 0);             /* ipc_flags */
    put32(frame + 12, 6);            /* browse */
    /* 8 bytes of client context and reg_index stay zero */
    unsigned char *at = frame + 28 + 8; /* flags and interface index are zero */
    memcpy(at, type, strlen(type) + 1);
    at += strlen(type) + 1;
    memcpy(at, domain, strlen(domain) + 1);
    if (write(fd, frame, 28 + body) != (ssize_t)(28 + body)) {
        perror("write");
        return 4;
    }
    unsigned char status[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t count = read(fd, status + got, 4 - got);
        if (count <= 0) {
            printf("closed\n");
            return 5;
        }
        got += (size_t)count;
    }
    uint32_t value;
    memcpy(&value, status, 4);
    printf("status %d\n", (int32_t)ntohl(value));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "browse") == 0) return browse_on(connect_to(argv[2]));
    if (argc == 3 && strcmp(argv[1], "browse-on") == 0) return browse_on(atoi(argv[2]));
    if (argc == 4 && strcmp(argv[1], "connect-then-exec") == 0) {
        int fd = connect_to(argv[2]);
        char text[16];
        snprintf(text, sizeof(text), "%d", fd);
        execl(argv[3], argv[3], "browse-on", text, (char *)NULL);
        perror("exec");
        return 2;
    }
    fprintf(stderr, "usage: exec_probe browse SOCKET | connect-then-exec SOCKET PROGRAM | browse-on FD\n");
    return 64;
}
