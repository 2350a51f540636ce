/*
 * What the library's files share: the service and record reference structures, the dnssd IPC (version 1)
 * message writer and reader, and the connection helpers. Nothing here is exported (-fvisibility=hidden).
 */
#ifndef HERALD_DNS_SD_INTERNAL_H
#define HERALD_DNS_SD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dns_sd_api.h"

/* The dnssd IPC protocol, version 1: the 28-byte header and the operation codes. */
enum {
    IPC_VERSION = 1,
    IPC_HEADER_LENGTH = 28,
    IPC_MAXIMUM_BODY = 70000,
    IPC_FLAG_NO_REPLY = 1,
};

enum request_op {
    OP_CONNECTION = 1,
    OP_REGISTER_RECORD = 2,
    OP_REMOVE_RECORD = 3,
    OP_ENUMERATION = 4,
    OP_REGISTER_SERVICE = 5,
    OP_BROWSE = 6,
    OP_RESOLVE = 7,
    OP_QUERY = 8,
    OP_RECONFIRM = 9,
    OP_ADD_RECORD = 10,
    OP_UPDATE_RECORD = 11,
    OP_GET_PROPERTY = 13,
    OP_ADDR_INFO = 15,
    OP_CANCEL = 63,
};

enum reply_op {
    REPLY_ENUMERATION = 64,
    REPLY_REGISTER_SERVICE = 65,
    REPLY_BROWSE = 66,
    REPLY_RESOLVE = 67,
    REPLY_QUERY = 68,
    REPLY_REGISTER_RECORD = 69,
    REPLY_ADDR_INFO = 72,
    REPLY_ASYNC_ERROR = 73,
};

/* The record index that names a registration's own TXT record in update-record requests. */
#define TXT_RECORD_INDEX 0xFFFFFFFFu

/* The fields every reply starts with. */
struct reply_head {
    uint32_t operation;
    uint64_t context;
    DNSServiceFlags flags;
    uint32_t interface_index;
    DNSServiceErrorType error;
};

struct reader;

/* Turns one reply for an operation into its callback; `body` is positioned after the common fields.
 * `body` is NULL for an async-error reply: only the head is known. */
typedef void (*reply_handler)(DNSServiceRef op, const struct reply_head *head, struct reader *body);

struct _DNSRecordRef_t {
    uint32_t magic;
    DNSServiceRef owner;
    uint32_t index;
    uint64_t context;
    DNSServiceRegisterRecordReply callback;
    void *app_context;
    struct _DNSRecordRef_t *next;
};

struct _DNSServiceRef_t {
    uint32_t magic;
    /* The Unix socket to the daemon; subordinates of a shared connection use their primary's. */
    int fd;
    uint32_t operation;
    /* The client context the daemon echoes in every reply to this operation. */
    uint64_t context;
    /* For a subordinate of a shared connection: the connection. NULL for a primary. */
    DNSServiceRef primary;
    /* On a primary: its subordinates. On a subordinate: the next one. */
    DNSServiceRef next;
    /* Records added to a registration, or registered on a connection. */
    DNSRecordRef records;
    uint32_t next_record_index;
    /* On a primary: the next context to give out. */
    uint64_t next_context;
    reply_handler handler;
    void *callback;
    void *app_context;
    /* While DNSServiceProcessResult runs on a primary: where to note that a callback deallocated it. */
    int *freed_flag;
    /* The daemon closed the connection or sent something unreadable: every later call fails. */
    int defunct;
};

#define SERVICE_REF_MAGIC 0x48724C64u
#define RECORD_REF_MAGIC 0x48725263u

/* --- message writer (message.c) --- */

/* A request being built: the header and then the body, growing as fields are appended. A failed
 * allocation or a field that does not fit makes `failed` true, and sending refuses the message. */
struct message {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    int failed;
};

void message_begin(struct message *m, uint32_t op, uint64_t context, uint32_t record_index,
                   int with_error_return_path);
void message_put_u32(struct message *m, uint32_t value);
void message_put_u16(struct message *m, uint16_t value);
void message_put_raw(struct message *m, const void *bytes, size_t count);
void message_put_string(struct message *m, const char *text);
void message_put_data16(struct message *m, const void *bytes, size_t count);
void message_set_ipc_flags(struct message *m, uint32_t flags);
/* Writes the body length into the header; returns 0, or -1 when the message could not be built. */
int message_finish(struct message *m);
void message_free(struct message *m);

/* --- reply reader (message.c) --- */

struct reader {
    const uint8_t *at;
    const uint8_t *end;
    int failed;
};

uint32_t reader_u32(struct reader *r);
uint16_t reader_u16(struct reader *r);
/* A NUL-terminated string inside the body, or "" (and `failed`) when it has no NUL. */
const char *reader_string(struct reader *r);
/* `count` bytes inside the body, or NULL (and `failed`). */
const uint8_t *reader_bytes(struct reader *r, size_t count);

/* --- the connection to the daemon (connection.c) --- */

/* Opens a connection to the app socket (DNSSD_UDS_PATH, else the default path); -1 on failure. */
int connection_open(void);
/* Sends a request as the first one of its connection and reads its 4-byte status in band. */
DNSServiceErrorType connection_send_first(int fd, struct message *m);
/* Sends a request on an established connection, passing one end of a socket pair with SCM_RIGHTS on
 * the last byte, and reads the status from the other end. */
DNSServiceErrorType connection_send_passing_socket(int fd, struct message *m);
/* Sends a request that gets no status (cancel). */
void connection_send_plain(int fd, struct message *m);
/* Reads exactly `count` bytes, waiting at most `timeout_ms` in all (-1: no limit); 0 or -1. */
int connection_read_exactly(int fd, void *buffer, size_t count, int timeout_ms);
/* Whether input is waiting on `fd` right now. */
int connection_has_input(int fd);

/* --- service references (service_ref.c) --- */

DNSServiceRef service_ref_is_valid(DNSServiceRef ref);
/* Creates the reference for a new operation: a new connection, or, with kDNSServiceFlagsShareConnection,
 * a subordinate of the connection in *sdRef. */
DNSServiceErrorType service_ref_create(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t op,
                                       reply_handler handler, void *callback, void *app_context,
                                       DNSServiceRef *created);
/* Sends the request that starts `ref`'s operation; on an error status, frees `ref`. */
DNSServiceErrorType service_ref_start(DNSServiceRef ref, struct message *m);
/* Whether a request on `ref` starts with the error-return path (subordinates of a shared connection). */
int service_ref_is_subordinate(DNSServiceRef ref);
uint64_t service_ref_new_context(DNSServiceRef ref);
void service_ref_free_records(DNSServiceRef ref);

/* --- reply handlers (replies.c) --- */

void handle_enumeration_reply(DNSServiceRef, const struct reply_head *, struct reader *);
void handle_register_reply(DNSServiceRef, const struct reply_head *, struct reader *);
void handle_browse_reply(DNSServiceRef, const struct reply_head *, struct reader *);
void handle_resolve_reply(DNSServiceRef, const struct reply_head *, struct reader *);
void handle_query_reply(DNSServiceRef, const struct reply_head *, struct reader *);
void handle_addr_info_reply(DNSServiceRef, const struct reply_head *, struct reader *);
/* The reply operation each request's replies carry (0: none). */
uint32_t expected_reply(uint32_t request_op);

/* --- records (records.c) --- */

/* Delivers a register-record reply to the record of `connection` it names. */
void records_deliver_reply(DNSServiceRef connection, const struct reply_head *head);

#endif
