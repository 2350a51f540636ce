/* Service references: creating them (a connection of their own, or a subordinate of a shared
 * connection), the event-driven side (DNSServiceRefSockFD, DNSServiceProcessResult) and deallocation. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

DNSServiceRef service_ref_is_valid(DNSServiceRef ref) {
    return ref && ref->magic == SERVICE_REF_MAGIC ? ref : NULL;
}

int service_ref_is_subordinate(DNSServiceRef ref) { return ref->primary != NULL; }

uint64_t service_ref_new_context(DNSServiceRef ref) {
    DNSServiceRef root = ref->primary ? ref->primary : ref;
    return root->next_context++;
}

void service_ref_free_records(DNSServiceRef ref) {
    DNSRecordRef record = ref->records;
    while (record) {
        DNSRecordRef next = record->next;
        record->magic = 0;
        free(record);
        record = next;
    }
    ref->records = NULL;
}

static void free_ref(DNSServiceRef ref) {
    service_ref_free_records(ref);
    ref->magic = 0;
    free(ref);
}

static void unlink_subordinate(DNSServiceRef ref) {
    DNSServiceRef *link = &ref->primary->next;
    while (*link && *link != ref) link = &(*link)->next;
    if (*link) *link = ref->next;
}

DNSServiceErrorType service_ref_create(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t op,
                                       reply_handler handler, void *callback, void *app_context,
                                       DNSServiceRef *created) {
    DNSServiceRef primary = NULL;
    if (flags & kDNSServiceFlagsShareConnection) {
        primary = service_ref_is_valid(*sdRef);
        if (!primary || primary->operation != OP_CONNECTION || primary->primary) return kDNSServiceErr_BadReference;
        if (primary->defunct) return kDNSServiceErr_ServiceNotRunning;
    }
    DNSServiceRef ref = calloc(1, sizeof *ref);
    if (!ref) return kDNSServiceErr_NoMemory;
    ref->magic = SERVICE_REF_MAGIC;
    ref->operation = op;
    ref->handler = handler;
    ref->callback = callback;
    ref->app_context = app_context;
    if (primary) {
        ref->fd = primary->fd;
        ref->primary = primary;
        ref->context = service_ref_new_context(primary);
        DNSServiceRef *link = &primary->next;
        while (*link) link = &(*link)->next;
        *link = ref;
    } else {
        ref->fd = connection_open();
        if (ref->fd < 0) {
            free(ref);
            return kDNSServiceErr_ServiceNotRunning;
        }
        /* As in Apple's client: a connection's own operation has context 0, and everything multiplexed on
         * it (subordinates, registered records) numbers up from 1, so 0 always means "the connection". */
        ref->context = 0;
        ref->next_context = 1;
    }
    *created = ref;
    return kDNSServiceErr_NoError;
}

DNSServiceErrorType service_ref_start(DNSServiceRef ref, struct message *m) {
    DNSServiceErrorType status = ref->primary ? connection_send_passing_socket(ref->fd, m)
                                              : connection_send_first(ref->fd, m);
    message_free(m);
    if (status != kDNSServiceErr_NoError) {
        /* Nothing was started: the reference goes without a cancel. */
        if (ref->primary) {
            unlink_subordinate(ref);
        } else {
            close(ref->fd);
        }
        free_ref(ref);
    }
    return status;
}

int DNSServiceRefSockFD(DNSServiceRef sdRef) {
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    /* A subordinate has no socket of its own: its results come through its connection's. */
    if (!ref || ref->primary) return -1;
    return ref->fd;
}

/* Finds which operation (or record) a reply belongs to and calls its handler. */
static void dispatch(DNSServiceRef ref, const struct reply_head *head, struct reader *body) {
    DNSServiceRef target = ref;
    if (ref->operation == OP_CONNECTION) {
        if (head->operation == REPLY_REGISTER_RECORD) {
            records_deliver_reply(ref, head);
            return;
        }
        for (target = ref->next; target; target = target->next) {
            if (target->context == head->context) break;
        }
        /* An async error that names no subordinate is about a record registered on the connection. */
        if (!target && head->operation == REPLY_ASYNC_ERROR) records_deliver_reply(ref, head);
        /* Replies can still be on their way for an operation the program has just cancelled. */
        if (!target) return;
    } else if (head->operation == REPLY_REGISTER_RECORD) {
        return;
    }
    if (!target->handler) return;
    if (head->operation == REPLY_ASYNC_ERROR) {
        target->handler(target, head, NULL);
    } else if (head->operation == expected_reply(target->operation)) {
        target->handler(target, head, body);
    }
}

DNSServiceErrorType DNSServiceProcessResult(DNSServiceRef sdRef) {
    if (!sdRef) return kDNSServiceErr_BadParam;
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    if (!ref || ref->primary) return kDNSServiceErr_BadReference;
    if (ref->defunct) return kDNSServiceErr_ServiceNotRunning;
    /* A program that made the socket non-blocking must not be blocked: with nothing to read there is nothing to
       do (a spurious wake-up of its event loop). A reply that has begun to arrive is still read whole. */
    int mode = fcntl(ref->fd, F_GETFL);
    if (mode >= 0 && (mode & O_NONBLOCK) && !connection_has_input(ref->fd)) return kDNSServiceErr_NoError;
    for (;;) {
        uint8_t header[IPC_HEADER_LENGTH];
        if (connection_read_exactly(ref->fd, header, sizeof header, -1) != 0) {
            ref->defunct = 1;
            return kDNSServiceErr_ServiceNotRunning;
        }
        struct reader fields = {.at = header, .end = header + sizeof header};
        uint32_t version = reader_u32(&fields);
        uint32_t length = reader_u32(&fields);
        (void)reader_u32(&fields); /* ipc_flags */
        struct reply_head head = {0};
        head.operation = reader_u32(&fields);
        memcpy(&head.context, header + 16, 8);
        if (version != IPC_VERSION || length > IPC_MAXIMUM_BODY) {
            ref->defunct = 1;
            return kDNSServiceErr_Incompatible;
        }
        uint8_t *body = malloc(length ? length : 1);
        if (!body) return kDNSServiceErr_NoMemory;
        if (connection_read_exactly(ref->fd, body, length, -1) != 0) {
            free(body);
            ref->defunct = 1;
            return kDNSServiceErr_ServiceNotRunning;
        }
        struct reader reader = {.at = body, .end = body + length};
        head.flags = reader_u32(&reader);
        head.interface_index = reader_u32(&reader);
        head.error = (DNSServiceErrorType)reader_u32(&reader);
        int more = connection_has_input(ref->fd);
        if (more) head.flags |= kDNSServiceFlagsMoreComing;

        int freed = 0;
        int *outer = ref->freed_flag;
        ref->freed_flag = &freed;
        /* A reply too short for its common fields is dropped. */
        if (!reader.failed) dispatch(ref, &head, &reader);
        free(body);
        /* The callback may have deallocated the reference: then it must not be touched again. */
        if (freed) {
            if (outer) *outer = 1;
            return kDNSServiceErr_NoError;
        }
        ref->freed_flag = outer;
        if (!more) return kDNSServiceErr_NoError;
    }
}

void DNSServiceRefDeallocate(DNSServiceRef sdRef) {
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    if (!ref) return;
    if (ref->primary) {
        /* A subordinate: the daemon stops it on a cancel with its context (no status comes back). */
        if (!ref->primary->defunct) {
            struct message m;
            message_begin(&m, OP_CANCEL, ref->context, 0, 0);
            connection_send_plain(ref->fd, &m);
            message_free(&m);
        }
        unlink_subordinate(ref);
        free_ref(ref);
        return;
    }
    if (ref->freed_flag) *ref->freed_flag = 1;
    /* Closing the connection ends every operation on it; the daemon withdraws registrations. */
    close(ref->fd);
    DNSServiceRef sub = ref->next;
    while (sub) {
        DNSServiceRef next = sub->next;
        free_ref(sub);
        sub = next;
    }
    free_ref(ref);
}
