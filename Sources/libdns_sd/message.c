/* Writing requests and reading replies of the dnssd IPC protocol: big-endian integers, NUL-terminated
 * strings, 16-bit-length-prefixed data, and the 28-byte header in front. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void reserve(struct message *m, size_t extra) {
    if (m->failed) return;
    if (m->length + extra > IPC_HEADER_LENGTH + IPC_MAXIMUM_BODY) {
        m->failed = 1;
        return;
    }
    if (m->length + extra <= m->capacity) return;
    size_t capacity = m->capacity ? m->capacity : 256;
    while (capacity < m->length + extra) capacity *= 2;
    uint8_t *grown = realloc(m->bytes, capacity);
    if (!grown) {
        m->failed = 1;
        return;
    }
    m->bytes = grown;
    m->capacity = capacity;
}

static void put_be32_at(uint8_t *at, uint32_t value) {
    at[0] = (uint8_t)(value >> 24);
    at[1] = (uint8_t)(value >> 16);
    at[2] = (uint8_t)(value >> 8);
    at[3] = (uint8_t)value;
}

void message_put_raw(struct message *m, const void *bytes, size_t count) {
    reserve(m, count);
    if (m->failed) return;
    if (count) memcpy(m->bytes + m->length, bytes, count);
    m->length += count;
}

void message_put_u32(struct message *m, uint32_t value) {
    uint8_t bytes[4];
    put_be32_at(bytes, value);
    message_put_raw(m, bytes, 4);
}

void message_put_u16(struct message *m, uint16_t value) {
    uint8_t bytes[2] = {(uint8_t)(value >> 8), (uint8_t)value};
    message_put_raw(m, bytes, 2);
}

void message_put_string(struct message *m, const char *text) {
    message_put_raw(m, text, strlen(text) + 1);
}

void message_put_data16(struct message *m, const void *bytes, size_t count) {
    if (count > 0xFFFF) {
        m->failed = 1;
        return;
    }
    message_put_u16(m, (uint16_t)count);
    message_put_raw(m, bytes, count);
}

void message_begin(struct message *m, uint32_t op, uint64_t context, uint32_t record_index,
                   int with_error_return_path) {
    memset(m, 0, sizeof *m);
    message_put_u32(m, IPC_VERSION);
    message_put_u32(m, 0); /* datalen, filled in by message_finish */
    message_put_u32(m, 0); /* ipc_flags */
    message_put_u32(m, op);
    /* The client context is opaque to the daemon and echoed unchanged: host order is fine. */
    message_put_raw(m, &context, 8);
    message_put_u32(m, record_index);
    /* On an established connection the body begins with the error-return socket's path; the empty
     * string says the socket comes with SCM_RIGHTS. */
    if (with_error_return_path) message_put_raw(m, "", 1);
}

void message_set_ipc_flags(struct message *m, uint32_t flags) {
    if (m->failed || m->length < IPC_HEADER_LENGTH) return;
    put_be32_at(m->bytes + 8, flags);
}

int message_finish(struct message *m) {
    if (m->failed || m->length < IPC_HEADER_LENGTH) return -1;
    put_be32_at(m->bytes + 4, (uint32_t)(m->length - IPC_HEADER_LENGTH));
    return 0;
}

void message_free(struct message *m) {
    free(m->bytes);
    memset(m, 0, sizeof *m);
}

uint32_t reader_u32(struct reader *r) {
    if (r->failed || r->end - r->at < 4) {
        r->failed = 1;
        return 0;
    }
    uint32_t value = (uint32_t)r->at[0] << 24 | (uint32_t)r->at[1] << 16 | (uint32_t)r->at[2] << 8 | r->at[3];
    r->at += 4;
    return value;
}

uint16_t reader_u16(struct reader *r) {
    if (r->failed || r->end - r->at < 2) {
        r->failed = 1;
        return 0;
    }
    uint16_t value = (uint16_t)(r->at[0] << 8 | r->at[1]);
    r->at += 2;
    return value;
}

const char *reader_string(struct reader *r) {
    if (r->failed) return "";
    const uint8_t *nul = memchr(r->at, 0, (size_t)(r->end - r->at));
    if (!nul) {
        r->failed = 1;
        return "";
    }
    const char *text = (const char *)r->at;
    r->at = nul + 1;
    return text;
}

const uint8_t *reader_bytes(struct reader *r, size_t count) {
    if (r->failed || (size_t)(r->end - r->at) < count) {
        r->failed = 1;
        return NULL;
    }
    const uint8_t *bytes = r->at;
    r->at += count;
    return bytes;
}
