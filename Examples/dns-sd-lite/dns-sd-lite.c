/*
 * dns-sd-lite: a small `dns-sd` written against nothing but dns_sd.h.
 *
 *   dns-sd-lite [-t SECONDS] -B TYPE [DOMAIN]                  browse for instances of TYPE
 *   dns-sd-lite [-t SECONDS] -R NAME TYPE DOMAIN PORT [KEY=VALUE ...]
 *                                                              register a service (TYPE may list subtypes:
 *                                                              _http._tcp,_printer)
 *   dns-sd-lite [-t SECONDS] -L NAME TYPE [DOMAIN]             resolve an instance (host, port, TXT)
 *   dns-sd-lite [-t SECONDS] -G v4|v6|v4v6 HOSTNAME            look up addresses
 *
 * It runs until -t SECONDS pass (default: until interrupted), waiting on DNSServiceRefSockFD with select()
 * and calling DNSServiceProcessResult when the socket is readable, as an event-driven program does.
 * Build it against Debian's header and link with -ldns_sd; run it against Herald's library with
 * LD_LIBRARY_PATH. DNSServiceGetAddrInfo is newer than Debian's header, so -G finds it at run time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>

#include <dns_sd.h>

/* DNSServiceGetAddrInfo as Apple's dns_sd.h declares it. */
typedef uint32_t LiteProtocol;
typedef void (*LiteAddrInfoReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType, const char *,
                                  const struct sockaddr *, uint32_t, void *);
typedef DNSServiceErrorType (*LiteGetAddrInfo)(DNSServiceRef *, DNSServiceFlags, uint32_t, LiteProtocol,
                                               const char *, LiteAddrInfoReply, void *);

static void timestamp(void) {
    struct timeval now;
    gettimeofday(&now, NULL);
    struct tm local;
    localtime_r(&now.tv_sec, &local);
    printf("%02d:%02d:%02d.%03d  ", local.tm_hour, local.tm_min, local.tm_sec, (int)(now.tv_usec / 1000));
}

static void on_browse(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                      const char *name, const char *type, const char *domain, void *context) {
    (void)ref;
    (void)context;
    if (error) {
        printf("Browse error %d%s\n", (int)error, error == kDNSServiceErr_NoAuth ? " (NoAuth: not permitted)" : "");
    } else {
        timestamp();
        printf("%-3s %6X %3u %-20s %-20s %s\n", (flags & kDNSServiceFlagsAdd) ? "Add" : "Rmv", (unsigned)flags,
               (unsigned)interface, domain, type, name);
    }
    if (!(flags & kDNSServiceFlagsMoreComing)) fflush(stdout);
}

static void on_register(DNSServiceRef ref, DNSServiceFlags flags, DNSServiceErrorType error, const char *name,
                        const char *type, const char *domain, void *context) {
    (void)ref;
    (void)flags;
    (void)context;
    timestamp();
    if (error)
        printf("Registration error %d%s\n", (int)error,
               error == kDNSServiceErr_NoAuth ? " (NoAuth: not permitted)" : "");
    else
        printf("Got a reply for service %s.%s%s: Name now registered and active\n", name, type, domain);
    fflush(stdout);
}

static void print_txt(uint16_t length, const unsigned char *txt) {
    uint16_t count = TXTRecordGetCount(length, txt);
    for (uint16_t i = 0; i < count; i++) {
        char key[256];
        uint8_t value_length;
        const void *value;
        if (TXTRecordGetItemAtIndex(length, txt, i, sizeof key, key, &value_length, &value) != 0) continue;
        printf(" %s", key);
        if (value) {
            putchar('=');
            for (uint8_t j = 0; j < value_length; j++) {
                unsigned char c = ((const unsigned char *)value)[j];
                if (c < 0x20 || c >= 0x7F || c == '\\')
                    printf("\\x%02X", c);
                else
                    putchar(c);
            }
        }
    }
    putchar('\n');
}

static void on_resolve(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                       const char *fullname, const char *host, uint16_t port, uint16_t txt_length,
                       const unsigned char *txt, void *context) {
    (void)ref;
    (void)flags;
    (void)context;
    timestamp();
    if (error) {
        printf("Resolve error %d%s\n", (int)error, error == kDNSServiceErr_NoAuth ? " (NoAuth: not permitted)" : "");
    } else {
        printf("%s can be reached at %s:%u (interface %u)\n", fullname, host, (unsigned)ntohs(port),
               (unsigned)interface);
        print_txt(txt_length, txt);
    }
    fflush(stdout);
}

static void on_address(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                       const char *hostname, const struct sockaddr *address, uint32_t ttl, void *context) {
    (void)ref;
    (void)context;
    if (error || !address) {
        printf("Address lookup error %d%s\n", (int)error,
               error == kDNSServiceErr_NoAuth ? " (NoAuth: not permitted)" : "");
        fflush(stdout);
        return;
    }
    char text[INET6_ADDRSTRLEN] = "?";
    if (address->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, text, sizeof text);
    else if (address->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, text, sizeof text);
    timestamp();
    printf("%-3s %6X %3u %-30s %-40s %u\n", (flags & kDNSServiceFlagsAdd) ? "Add" : "Rmv", (unsigned)flags,
           (unsigned)interface, hostname, text, (unsigned)ttl);
    if (!(flags & kDNSServiceFlagsMoreComing)) fflush(stdout);
}

/* Waits on the reference's socket and processes results until `seconds` pass (0: forever). */
static int run(DNSServiceRef ref, double seconds) {
    int fd = DNSServiceRefSockFD(ref);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct timeval wait = {.tv_sec = 1};
        if (seconds > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            double left = seconds - ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9);
            if (left <= 0) return 0;
            wait.tv_sec = (time_t)left;
            wait.tv_usec = (suseconds_t)((left - (double)wait.tv_sec) * 1e6);
        }
        fd_set readable;
        FD_ZERO(&readable);
        FD_SET(fd, &readable);
        int ready = select(fd + 1, &readable, NULL, NULL, &wait);
        if (ready < 0) return 1;
        if (ready > 0) {
            DNSServiceErrorType error = DNSServiceProcessResult(ref);
            if (error) {
                fprintf(stderr, "DNSServiceProcessResult: error %d\n", (int)error);
                return 1;
            }
        }
    }
}

static int usage(void) {
    fprintf(stderr, "usage: dns-sd-lite [-t SECONDS] -B TYPE [DOMAIN]\n"
                    "       dns-sd-lite [-t SECONDS] -R NAME TYPE DOMAIN PORT [KEY=VALUE ...]\n"
                    "       dns-sd-lite [-t SECONDS] -L NAME TYPE [DOMAIN]\n"
                    "       dns-sd-lite [-t SECONDS] -G v4|v6|v4v6 HOSTNAME\n");
    return 64;
}

int main(int argc, char **argv) {
    double seconds = 0;
    int at = 1;
    if (argc > 2 && strcmp(argv[1], "-t") == 0) {
        seconds = atof(argv[2]);
        at = 3;
    }
    if (argc - at < 2) return usage();
    const char *mode = argv[at];
    char **args = argv + at + 1;
    int count = argc - at - 1;
    DNSServiceRef ref = NULL;
    DNSServiceErrorType error;
    TXTRecordRef txt;
    TXTRecordCreate(&txt, 0, NULL);

    if (strcmp(mode, "-B") == 0) {
        printf("Browsing for %s\n", args[0]);
        printf("Timestamp     A/R  Flags  if %-20s %-20s %s\n", "Domain", "Service Type", "Instance Name");
        error = DNSServiceBrowse(&ref, 0, 0, args[0], count > 1 ? args[1] : NULL, on_browse, NULL);
    } else if (strcmp(mode, "-R") == 0 && count >= 4) {
        for (int i = 4; i < count; i++) {
            char *equals = strchr(args[i], '=');
            if (equals) *equals = '\0';
            error = TXTRecordSetValue(&txt, args[i], equals ? (uint8_t)strlen(equals + 1) : 0, equals ? equals + 1 : NULL);
            if (error) {
                fprintf(stderr, "TXT item %s: error %d\n", args[i], (int)error);
                return 65;
            }
        }
        printf("Registering Service \"%s\" type %s domain %s port %s\n", args[0], args[1], args[2], args[3]);
        error = DNSServiceRegister(&ref, 0, 0, args[0], args[1], args[2], NULL, htons((uint16_t)atoi(args[3])),
                                   TXTRecordGetLength(&txt), TXTRecordGetBytesPtr(&txt), on_register, NULL);
    } else if (strcmp(mode, "-L") == 0 && count >= 2) {
        char full_name[kDNSServiceMaxDomainName];
        if (DNSServiceConstructFullName(full_name, args[0], args[1], count > 2 ? args[2] : "local.") == 0)
            printf("Lookup %s\n", full_name);
        error = DNSServiceResolve(&ref, 0, 0, args[0], args[1], count > 2 ? args[2] : "local.", on_resolve, NULL);
    } else if (strcmp(mode, "-G") == 0 && count >= 2) {
        LiteGetAddrInfo get_addr_info = (LiteGetAddrInfo)dlsym(RTLD_DEFAULT, "DNSServiceGetAddrInfo");
        if (!get_addr_info) {
            fprintf(stderr, "this libdns_sd has no DNSServiceGetAddrInfo\n");
            return 69;
        }
        LiteProtocol protocol = strcmp(args[0], "v4") == 0 ? 1 : strcmp(args[0], "v6") == 0 ? 2 : 3;
        printf("Timestamp     A/R  Flags  if %-30s %-40s %s\n", "Hostname", "Address", "TTL");
        error = get_addr_info(&ref, 0, 0, protocol, args[1], on_address, NULL);
    } else {
        return usage();
    }
    fflush(stdout);
    if (error) {
        fprintf(stderr, "%s failed: error %d%s\n", mode, (int)error,
                error == kDNSServiceErr_NoAuth ? " (NoAuth: not permitted)" : "");
        return error == kDNSServiceErr_NoAuth ? 77 : 1;
    }
    int status = run(ref, seconds);
    DNSServiceRefDeallocate(ref);
    TXTRecordDeallocate(&txt);
    return status;
}
