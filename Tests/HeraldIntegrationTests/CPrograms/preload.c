/* A library a hostile user preloads into a granted app (LD_PRELOAD=preload.so tictactoe …): before the app's own
 * code runs, it connects to the app socket named by HERALD_ATTACK_SOCKET, asks for a browse of
 * HERALD_ATTACK_TYPE as the app, prints the status the daemon answers, and ends the process. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

__attribute__((constructor)) static void attack(void) {
    const char *path = getenv("HERALD_ATTACK_SOCKET"), *type = getenv("HERALD_ATTACK_TYPE");
    if (!path || !type) return;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        printf("preload: cannot connect\n");
        _exit(3);
    }
    unsigned char frame[256];
    size_t body = 8 + strlen(type) + 1 + 1;
    memset(frame, 0, sizeof(frame));
    uint32_t value = htonl(1);
    memcpy(frame, &value, 4);
    value = htonl((uint32_t)body);
    memcpy(frame + 4, &value, 4);
    value = htonl(6); /* browse */
    memcpy(frame + 12, &value, 4);
    memcpy(frame + 36, type, strlen(type) + 1);
    if (write(fd, frame, 28 + body) != (ssize_t)(28 + body)) _exit(4);
    unsigned char status[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t n = read(fd, status + got, 4 - got);
        if (n <= 0) {
            printf("preload: closed\n");
            _exit(5);
        }
        got += (size_t)n;
    }
    memcpy(&value, status, 4);
    printf("preload: status %d\n", (int32_t)ntohl(value));
    fflush(stdout);
    _exit(0);
}
