/*
 * The D-Bus benchmark's client (dbus_clients.py): a libavahi-client program, as CUPS, PipeWire or gvfs are,
 * measuring whichever daemon owns org.freedesktop.Avahi on the system bus ($DBUS_SYSTEM_BUS_ADDRESS).
 *
 *   avahi-client-bench first-item TYPE_PREFIX FIRST COUNT GAP_MS
 *       For each k in FIRST .. FIRST+COUNT-1, a ServiceBrowser of TYPE_PREFIX<k>._tcp: prints
 *       "first K SECONDS" (from the browser's creation call to its first ItemNew) or "first K none" after
 *       10 s, frees the browser and lets GAP_MS pass before the next one.
 *   avahi-client-bench resolve WINDOW
 *       Reads "NAME<TAB>TYPE" lines from standard input up to a line "end", prints "ready COUNT", waits for a
 *       line "go", then resolves every instance in `local` (IPv4) with at most WINDOW ServiceResolvers in
 *       flight, freeing each after its Found or Failure, as a well-behaved client does. Prints
 *       "progress SECONDS DONE" every 0.5 s and at the end "resolved FOUND FAILURE REFUSED SECONDS MAX_IN_FLIGHT
 *       CPU_SECONDS MAX_RSS_KIB CALL_MEAN_MS CALL_MAX_MS" (the client's own CPU time and peak RSS, and the time
 *       its blocking ServiceResolverNew calls took); each failure's reason goes to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/error.h>
#include <avahi-common/simple-watch.h>

static AvahiSimplePoll *loop;
static AvahiClient *client;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs the loop until *flag is set or `until` (monotonic seconds) passes. */
static void run_until(const int *flag, double until) {
    while ((flag == NULL || !*flag) && now() < until) {
        int left = (int)((until - now()) * 1000) + 1;
        if (avahi_simple_poll_iterate(loop, left > 100 ? 100 : left) != 0) {
            fprintf(stderr, "the event loop failed\n");
            exit(3);
        }
    }
}

static void client_callback(AvahiClient *c, AvahiClientState state, void *userdata) {
    (void)userdata;
    if (state == AVAHI_CLIENT_FAILURE) {
        fprintf(stderr, "client failure: %s\n", avahi_strerror(avahi_client_errno(c)));
        exit(2);
    }
}

/* ---------------------------------------------------------------- browse → first ItemNew */

static double browse_started, first_item_at;
static int browse_done;

static void browse_callback(AvahiServiceBrowser *b, AvahiIfIndex interface, AvahiProtocol protocol,
                            AvahiBrowserEvent event, const char *name, const char *type, const char *domain,
                            AvahiLookupResultFlags flags, void *userdata) {
    (void)b, (void)interface, (void)protocol, (void)name, (void)type, (void)domain, (void)flags, (void)userdata;
    if (event == AVAHI_BROWSER_NEW && !browse_done) {
        first_item_at = now();
        browse_done = 1;
    } else if (event == AVAHI_BROWSER_FAILURE) {
        fprintf(stderr, "browser failure: %s\n", avahi_strerror(avahi_client_errno(client)));
        browse_done = -1;
    }
}

static int first_item(const char *prefix, int first, int count, int gap_ms) {
    for (int k = first; k < first + count; k++) {
        char type[256];
        snprintf(type, sizeof type, "%s%d._tcp", prefix, k);
        browse_done = 0;
        browse_started = now();
        AvahiServiceBrowser *browser = avahi_service_browser_new(client, AVAHI_IF_UNSPEC, AVAHI_PROTO_INET, type,
                                                                 "local", 0, browse_callback, NULL);
        if (browser == NULL) {
            fprintf(stderr, "ServiceBrowserNew %s: %s\n", type, avahi_strerror(avahi_client_errno(client)));
            printf("first %d none\n", k);
        } else {
            run_until(&browse_done, browse_started + 10);
            if (browse_done == 1)
                printf("first %d %.6f\n", k, first_item_at - browse_started);
            else
                printf("first %d none\n", k);
            avahi_service_browser_free(browser);
        }
        fflush(stdout);
        run_until(NULL, now() + gap_ms / 1000.0);
    }
    return 0;
}

/* ---------------------------------------------------------------- resolving many with a window */

struct instance {
    char *name;
    char *type;
};

static struct instance *instances;
static size_t instance_count, next_instance, finished, in_flight, max_in_flight;
static unsigned found, failed, refused;
static double call_total, call_max; /* seconds spent in the blocking ServiceResolverNew calls */

static void resolve_callback(AvahiServiceResolver *r, AvahiIfIndex interface, AvahiProtocol protocol,
                             AvahiResolverEvent event, const char *name, const char *type, const char *domain,
                             const char *host_name, const AvahiAddress *address, uint16_t port,
                             AvahiStringList *txt, AvahiLookupResultFlags flags, void *userdata) {
    (void)interface, (void)protocol, (void)domain, (void)host_name, (void)address, (void)port, (void)txt;
    (void)flags, (void)userdata;
    if (event == AVAHI_RESOLVER_FOUND) {
        found++;
    } else {
        failed++;
        fprintf(stderr, "failure %s.%s: %s\n", name, type, avahi_strerror(avahi_client_errno(client)));
    }
    avahi_service_resolver_free(r);
    in_flight--;
    finished++;
}

/* Starts resolvers until WINDOW are in flight or none is left to start. */
static void fill(size_t window) {
    while (in_flight < window && next_instance < instance_count) {
        struct instance *it = &instances[next_instance++];
        double called = now();
        AvahiServiceResolver *r = avahi_service_resolver_new(client, AVAHI_IF_UNSPEC, AVAHI_PROTO_INET, it->name,
                                                             it->type, "local", AVAHI_PROTO_INET, 0,
                                                             resolve_callback, NULL);
        double call = now() - called;
        call_total += call;
        if (call > call_max)
            call_max = call;
        if (r == NULL) {
            refused++;
            finished++;
            fprintf(stderr, "ServiceResolverNew %s.%s: %s\n", it->name, it->type,
                    avahi_strerror(avahi_client_errno(client)));
            continue;
        }
        in_flight++;
        if (in_flight > max_in_flight)
            max_in_flight = in_flight;
    }
}

static int resolve(size_t window) {
    char line[1024];
    size_t capacity = 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = 0;
        if (strcmp(line, "end") == 0) {
            printf("ready %zu\n", instance_count);
            fflush(stdout);
            if (fgets(line, sizeof line, stdin) == NULL || strncmp(line, "go", 2) != 0)
                return 1;
            break;
        }
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            continue;
        *tab = 0;
        if (instance_count == capacity) {
            capacity = capacity ? capacity * 2 : 1024;
            instances = realloc(instances, capacity * sizeof *instances);
            if (instances == NULL)
                return 1;
        }
        instances[instance_count].name = strdup(line);
        instances[instance_count].type = strdup(tab + 1);
        instance_count++;
    }
    double start = now(), next_progress = start + 0.5, deadline = start + 300;
    while (finished < instance_count && now() < deadline) {
        fill(window);
        if (finished >= instance_count)
            break;
        run_until(NULL, now() + 0.05);
        if (now() >= next_progress) {
            printf("progress %.3f %zu\n", now() - start, finished);
            fflush(stdout);
            next_progress += 0.5;
        }
    }
    double seconds = now() - start;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    double cpu = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                 + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    printf("resolved %u %u %u %.6f %zu %.3f %ld %.3f %.3f\n", found, failed, refused, seconds, max_in_flight, cpu,
           usage.ru_maxrss, instance_count ? call_total / (double)instance_count * 1000 : 0.0, call_max * 1000);
    return finished < instance_count;
}

int main(int argc, char **argv) {
    int error;
    if (argc < 3) {
        fprintf(stderr, "usage: %s first-item TYPE_PREFIX FIRST COUNT GAP_MS | resolve WINDOW\n", argv[0]);
        return 64;
    }
    loop = avahi_simple_poll_new();
    client = avahi_client_new(avahi_simple_poll_get(loop), 0, client_callback, NULL, &error);
    if (client == NULL) {
        fprintf(stderr, "avahi_client_new: %s\n", avahi_strerror(error));
        return 2;
    }
    int status;
    if (strcmp(argv[1], "first-item") == 0 && argc == 6)
        status = first_item(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    else if (strcmp(argv[1], "resolve") == 0 && argc == 3)
        status = resolve((size_t)atoi(argv[2]));
    else {
        fprintf(stderr, "bad arguments\n");
        status = 64;
    }
    avahi_client_free(client);
    avahi_simple_poll_free(loop);
    return status;
}
