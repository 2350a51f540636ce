/*
 * Exercises the parts of dns_sd.h that dns-sd-lite does not, printing what the library reports, one line
 * per event, so that a test can compare it with what the network holds.
 *
 *   dnssd_probe query NAME RRTYPE SECONDS          DNSServiceQueryRecord
 *   dnssd_probe negative HOST RRTYPE SECONDS       the record query and an IPv6 address lookup of HOST, both
 *                                                  with kDNSServiceFlagsReturnIntermediates (negative answers)
 *   dnssd_probe shared TYPE INSTANCE SECONDS       browse and resolve as subordinates of one connection
 *   dnssd_probe enumerate SECONDS                  DNSServiceEnumerateDomains (browse domains)
 *   dnssd_probe property                           DNSServiceGetProperty("DaemonVersion")
 *   dnssd_probe records TYPE                       register, then add/update/remove records, register-record
 *   dnssd_probe noauth TYPE INSTANCE HOST SECONDS  every gated operation: its return value and callback errors
 *   dnssd_probe misuse                             bad arguments and references (any daemon, or none)
 *
 * Built against Debian's dns_sd.h; the calls that header lacks (DNSServiceGetAddrInfo,
 * DNSServiceGetProperty, the share-connection flag) are declared here as Apple's header has them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <dns_sd.h>

#ifndef kDNSServiceFlagsShareConnection
#define kDNSServiceFlagsShareConnection 0x4000
#endif
#ifndef kDNSServiceFlagsReturnIntermediates
#define kDNSServiceFlagsReturnIntermediates 0x1000
#endif

typedef void (*AddrInfoReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType, const char *,
                              const struct sockaddr *, uint32_t, void *);
typedef DNSServiceErrorType (*GetAddrInfoFunction)(DNSServiceRef *, DNSServiceFlags, uint32_t, uint32_t,
                                                   const char *, AddrInfoReply, void *);
typedef DNSServiceErrorType (*GetPropertyFunction)(const char *, void *, uint32_t *);

static void *api(const char *name) {
    void *function = dlsym(RTLD_DEFAULT, name);
    if (!function) {
        printf("missing %s\n", name);
        exit(69);
    }
    return function;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Processes results of `ref` for `seconds`. */
static int pump(DNSServiceRef ref, double seconds) {
    int fd = DNSServiceRefSockFD(ref);
    double end = now() + seconds;
    while (now() < end) {
        double left = end - now();
        struct timeval wait = {.tv_sec = (time_t)left, .tv_usec = (suseconds_t)((left - (double)(time_t)left) * 1e6)};
        fd_set readable;
        FD_ZERO(&readable);
        FD_SET(fd, &readable);
        int ready = select(fd + 1, &readable, NULL, NULL, &wait);
        if (ready < 0) return 1;
        if (ready > 0) {
            DNSServiceErrorType error = DNSServiceProcessResult(ref);
            if (error) {
                printf("process-result error=%d\n", (int)error);
                return 1;
            }
        }
    }
    fflush(stdout);
    return 0;
}

static void on_query(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                     const char *name, uint16_t rrtype, uint16_t rrclass, uint16_t rdlen, const void *rdata,
                     uint32_t ttl, void *context) {
    (void)ref;
    printf("%s flags=%u if=%u error=%d name=%s type=%u class=%u ttl=%u rdata=", context ? (char *)context : "query",
           (unsigned)flags, (unsigned)interface, (int)error, name, rrtype, rrclass, (unsigned)ttl);
    for (uint16_t i = 0; i < rdlen; i++) printf("%02x", ((const unsigned char *)rdata)[i]);
    printf("\n");
}

static void on_browse(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                      const char *name, const char *type, const char *domain, void *context) {
    (void)ref;
    printf("%s flags=%u if=%u error=%d name=%s type=%s domain=%s\n", (char *)context, (unsigned)flags,
           (unsigned)interface, (int)error, name, type, domain);
}

static void on_resolve(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                       const char *fullname, const char *host, uint16_t port, uint16_t txt_length,
                       const unsigned char *txt, void *context) {
    (void)ref;
    (void)txt;
    printf("%s flags=%u if=%u error=%d fullname=%s host=%s port=%u txtlen=%u\n", (char *)context, (unsigned)flags,
           (unsigned)interface, (int)error, fullname, host, (unsigned)ntohs(port), (unsigned)txt_length);
}

static void on_register(DNSServiceRef ref, DNSServiceFlags flags, DNSServiceErrorType error, const char *name,
                        const char *type, const char *domain, void *context) {
    (void)ref;
    printf("%s flags=%u error=%d name=%s type=%s domain=%s\n", (char *)context, (unsigned)flags, (int)error, name,
           type, domain);
}

static void on_address(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                       const char *host, const struct sockaddr *address, uint32_t ttl, void *context) {
    (void)ref;
    char text[INET6_ADDRSTRLEN] = "-";
    if (address && address->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, text, sizeof text);
    if (address && address->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, text, sizeof text);
    printf("%s flags=%u if=%u error=%d host=%s address=%s ttl=%u\n", (char *)context, (unsigned)flags,
           (unsigned)interface, (int)error, host, text, (unsigned)ttl);
}

static void on_domain(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                      const char *domain, void *context) {
    (void)ref;
    (void)context;
    printf("domain flags=%u if=%u error=%d domain=%s\n", (unsigned)flags, (unsigned)interface, (int)error, domain);
}

static void on_record(DNSServiceRef ref, DNSRecordRef record, DNSServiceFlags flags, DNSServiceErrorType error,
                      void *context) {
    (void)ref;
    (void)record;
    printf("%s flags=%u error=%d\n", (char *)context, (unsigned)flags, (int)error);
}

static int query(int argc, char **argv) {
    if (argc < 5) return 64;
    DNSServiceRef ref;
    DNSServiceErrorType error =
        DNSServiceQueryRecord(&ref, 0, 0, argv[2], (uint16_t)atoi(argv[3]), kDNSServiceClass_IN, on_query, NULL);
    printf("query return=%d\n", (int)error);
    if (error) return 1;
    int status = pump(ref, atof(argv[4]));
    DNSServiceRefDeallocate(ref);
    return status;
}

static int negative(int argc, char **argv) {
    if (argc < 5) return 64;
    GetAddrInfoFunction get_addr_info = (GetAddrInfoFunction)api("DNSServiceGetAddrInfo");
    DNSServiceRef connection;
    DNSServiceErrorType error = DNSServiceCreateConnection(&connection);
    if (error) return 1;
    DNSServiceRef query = connection, lookup = connection;
    error = DNSServiceQueryRecord(&query, kDNSServiceFlagsShareConnection | kDNSServiceFlagsReturnIntermediates, 0,
                                  argv[2], (uint16_t)atoi(argv[3]), kDNSServiceClass_IN, on_query, "query");
    printf("query return=%d\n", (int)error);
    if (error) return 1;
    error = get_addr_info(&lookup, kDNSServiceFlagsShareConnection | kDNSServiceFlagsReturnIntermediates, 0,
                          0x2 /* kDNSServiceProtocol_IPv6 */, argv[2], on_address, "addrinfo");
    printf("addrinfo return=%d\n", (int)error);
    if (error) return 1;
    int status = pump(connection, atof(argv[4]));
    DNSServiceRefDeallocate(connection);
    return status;
}

static int shared(int argc, char **argv) {
    if (argc < 5) return 64;
    DNSServiceRef connection;
    DNSServiceErrorType error = DNSServiceCreateConnection(&connection);
    printf("connection return=%d fd=%d\n", (int)error, error ? -1 : DNSServiceRefSockFD(connection));
    if (error) return 1;
    DNSServiceRef browse = connection, resolve = connection;
    error = DNSServiceBrowse(&browse, kDNSServiceFlagsShareConnection, 0, argv[2], NULL, on_browse, "browse");
    printf("browse return=%d subordinate-fd=%d\n", (int)error, error ? -2 : DNSServiceRefSockFD(browse));
    if (error) return 1;
    error = DNSServiceResolve(&resolve, kDNSServiceFlagsShareConnection, 0, argv[3], argv[2], "local.", on_resolve,
                              "resolve");
    printf("resolve return=%d\n", (int)error);
    if (error) return 1;
    double seconds = atof(argv[4]);
    int status = pump(connection, seconds / 2);
    /* Cancelling one subordinate leaves the other running on the same socket. */
    DNSServiceRefDeallocate(browse);
    printf("browse cancelled\n");
    DNSServiceRef again = connection;
    error = DNSServiceBrowse(&again, kDNSServiceFlagsShareConnection, 0, argv[2], NULL, on_browse, "browse-again");
    printf("browse-again return=%d\n", (int)error);
    status |= pump(connection, seconds / 2);
    DNSServiceRefDeallocate(connection);
    return status;
}

static int enumerate(int argc, char **argv) {
    if (argc < 3) return 64;
    DNSServiceRef ref;
    DNSServiceErrorType error = DNSServiceEnumerateDomains(&ref, 0x40 /* browse domains */, 0, on_domain, NULL);
    printf("enumerate return=%d\n", (int)error);
    if (error) return 1;
    int status = pump(ref, atof(argv[2]));
    DNSServiceRefDeallocate(ref);
    return status;
}

static int property(void) {
    GetPropertyFunction get_property = (GetPropertyFunction)api("DNSServiceGetProperty");
    uint32_t version = 0, size = sizeof version;
    DNSServiceErrorType error = get_property("DaemonVersion", &version, &size);
    printf("DaemonVersion return=%d size=%u value=%u\n", (int)error, (unsigned)size, (unsigned)version);
    size = sizeof version;
    error = get_property("NoSuchProperty", &version, &size);
    printf("NoSuchProperty return=%d\n", (int)error);
    return 0;
}

static int records(int argc, char **argv) {
    if (argc < 3) return 64;
    DNSServiceRef service;
    const char txt[] = "\x05" "a=one";
    DNSServiceErrorType error = DNSServiceRegister(&service, 0, 0, "Probe Records", argv[2], NULL, NULL, htons(4300),
                                                   sizeof txt - 1, txt, on_register, "register");
    printf("register return=%d\n", (int)error);
    if (error) return 1;
    pump(service, 2.5);
    const char new_txt[] = "\x05" "a=two";
    error = DNSServiceUpdateRecord(service, NULL, 0, sizeof new_txt - 1, new_txt, 0);
    printf("update-txt return=%d\n", (int)error);
    pump(service, 2.5); /* time for the peers to see the new TXT record */
    DNSRecordRef extra = NULL;
    const char extra_txt[] = "\x05" "extra";
    error = DNSServiceAddRecord(service, &extra, 0, kDNSServiceType_TXT, sizeof extra_txt - 1, extra_txt, 120);
    printf("add-record return=%d record=%s\n", (int)error, extra ? "set" : "null");
    if (extra) {
        error = DNSServiceRemoveRecord(service, extra, 0);
        printf("remove-record return=%d\n", (int)error);
    }
    DNSServiceRef connection;
    error = DNSServiceCreateConnection(&connection);
    printf("connection return=%d\n", (int)error);
    if (!error) {
        DNSRecordRef record = NULL;
        const unsigned char address[4] = {192, 0, 2, 7};
        error = DNSServiceRegisterRecord(connection, &record, kDNSServiceFlagsUnique, 0, "probe-record.local.",
                                         kDNSServiceType_A, kDNSServiceClass_IN, 4, address, 120, on_record,
                                         "register-record-callback");
        printf("register-record return=%d\n", (int)error);
        if (!error) pump(connection, 1.5);
        DNSServiceRefDeallocate(connection);
    }
    pump(service, 0.5);
    DNSServiceRefDeallocate(service);
    return 0;
}

/* Starts each gated operation on its own connection and prints its return value, then every callback's
 * error: NoAuth (-65555) as the return value is a static denial; as a callback error, a parked operation
 * (which delivers results later if access is granted while this runs). */
static int noauth(int argc, char **argv) {
    if (argc < 6) return 64;
    const char *type = argv[2], *instance = argv[3], *host = argv[4];
    DNSServiceRef refs[5];
    int count = 0;
    DNSServiceRef ref;
    DNSServiceErrorType error;
    error = DNSServiceBrowse(&ref, 0, 0, type, NULL, on_browse, "browse");
    printf("browse return=%d\n", (int)error);
    if (!error) refs[count++] = ref;
    error = DNSServiceResolve(&ref, 0, 0, instance, type, "local.", on_resolve, "resolve");
    printf("resolve return=%d\n", (int)error);
    if (!error) refs[count++] = ref;
    error = DNSServiceRegister(&ref, 0, 0, "NoAuth Probe", type, NULL, NULL, htons(4301), 0, NULL, on_register,
                               "register");
    printf("register return=%d\n", (int)error);
    if (!error) refs[count++] = ref;
    char name[300];
    snprintf(name, sizeof name, "%s.%s.local.", instance, type);
    error = DNSServiceQueryRecord(&ref, 0, 0, name, 33 /* SRV */, kDNSServiceClass_IN, on_query, "query");
    printf("query return=%d\n", (int)error);
    if (!error) refs[count++] = ref;
    GetAddrInfoFunction get_addr_info = (GetAddrInfoFunction)api("DNSServiceGetAddrInfo");
    error = get_addr_info(&ref, 0, 0, 0, host, on_address, "addrinfo");
    printf("addrinfo return=%d\n", (int)error);
    if (!error) refs[count++] = ref;
    fflush(stdout);
    double end = now() + atof(argv[5]);
    while (now() < end) {
        fd_set readable;
        FD_ZERO(&readable);
        int top = -1;
        for (int i = 0; i < count; i++) {
            int fd = DNSServiceRefSockFD(refs[i]);
            FD_SET(fd, &readable);
            if (fd > top) top = fd;
        }
        struct timeval wait = {.tv_usec = 100000};
        if (select(top + 1, &readable, NULL, NULL, &wait) <= 0) continue;
        for (int i = 0; i < count; i++) {
            if (FD_ISSET(DNSServiceRefSockFD(refs[i]), &readable)) DNSServiceProcessResult(refs[i]);
        }
        fflush(stdout);
    }
    for (int i = 0; i < count; i++) DNSServiceRefDeallocate(refs[i]);
    return 0;
}

static void noop_browse(DNSServiceRef ref, DNSServiceFlags flags, uint32_t interface, DNSServiceErrorType error,
                        const char *name, const char *type, const char *domain, void *context) {
    (void)ref, (void)flags, (void)interface, (void)error, (void)name, (void)type, (void)domain, (void)context;
}

/* Calls that must fail cleanly, whatever the daemon: each prints its return value. */
static int misuse(void) {
    DNSServiceRef ref = NULL;
    printf("browse-null-type return=%d\n", (int)DNSServiceBrowse(&ref, 0, 0, NULL, NULL, noop_browse, NULL));
    printf("browse-null-callback return=%d\n", (int)DNSServiceBrowse(&ref, 0, 0, "_x._tcp", NULL, NULL, NULL));
    printf("resolve-null-domain return=%d\n",
           (int)DNSServiceResolve(&ref, 0, 0, "x", "_x._tcp", NULL, on_resolve, NULL));
    printf("register-noautorename-without-callback return=%d\n",
           (int)DNSServiceRegister(&ref, kDNSServiceFlagsNoAutoRename, 0, "x", "_x._tcp", NULL, NULL, 1, 0, NULL, NULL, NULL));
    DNSServiceRef not_a_connection = NULL;
    printf("share-null-connection return=%d\n",
           (int)DNSServiceBrowse(&not_a_connection, kDNSServiceFlagsShareConnection, 0, "_x._tcp", NULL, noop_browse, NULL));
    printf("process-null return=%d sockfd-null=%d\n", (int)DNSServiceProcessResult(NULL), DNSServiceRefSockFD(NULL));
    printf("add-record-null return=%d\n", (int)DNSServiceAddRecord(NULL, NULL, 0, 16, 0, NULL, 0));
    printf("remove-record-null return=%d\n", (int)DNSServiceRemoveRecord(NULL, NULL, 0));
    DNSServiceRefDeallocate(NULL);
    printf("deallocate-null survived\n");
    /* Needs a daemon to tell these apart from "not running": */
    printf("connection return=%d\n", (int)DNSServiceCreateConnection(&ref));
    return 0;
}

/* An event loop that made the socket non-blocking and woke up with nothing to read: DNSServiceProcessResult
   must return at once (an alarm ends the program if it blocks). */
static int nonblocking(int argc, char **argv) {
    if (argc < 3) return 64;
    DNSServiceRef browse;
    DNSServiceErrorType error = DNSServiceBrowse(&browse, 0, 0, argv[2], NULL, noop_browse, NULL);
    printf("browse return=%d\n", (int)error);
    if (error) return 1;
    int fd = DNSServiceRefSockFD(browse);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    alarm(5);
    printf("nothing-to-read return=%d\n", (int)DNSServiceProcessResult(browse));
    alarm(0);
    DNSServiceRefDeallocate(browse);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return 64;
    if (strcmp(argv[1], "query") == 0) return query(argc, argv);
    if (strcmp(argv[1], "negative") == 0) return negative(argc, argv);
    if (strcmp(argv[1], "shared") == 0) return shared(argc, argv);
    if (strcmp(argv[1], "enumerate") == 0) return enumerate(argc, argv);
    if (strcmp(argv[1], "property") == 0) return property();
    if (strcmp(argv[1], "records") == 0) return records(argc, argv);
    if (strcmp(argv[1], "noauth") == 0) return noauth(argc, argv);
    if (strcmp(argv[1], "misuse") == 0) return misuse();
    if (strcmp(argv[1], "nonblocking") == 0) return nonblocking(argc, argv);
    return 64;
}
