/* TXT record helpers (RFC 6763 §6): building a record of length-prefixed "key=value" strings in a
 * TXTRecordRef, and reading keys and values out of any TXT rdata. Pure functions; no daemon involved. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* What a TXTRecordRef holds: the program's buffer or one of ours, its size, and the bytes used. */
struct txt_builder {
    uint8_t *bytes;
    uint16_t capacity;
    uint16_t length;
    uint8_t owned;
};

_Static_assert(sizeof(struct txt_builder) <= sizeof(TXTRecordRef), "a TXTRecordRef has 16 bytes");

static struct txt_builder *builder(TXTRecordRef *ref) { return (struct txt_builder *)(void *)ref; }

void TXTRecordCreate(TXTRecordRef *txtRecord, uint16_t bufferLen, void *buffer) {
    struct txt_builder *txt = builder(txtRecord);
    txt->bytes = buffer;
    txt->capacity = buffer ? bufferLen : 0;
    txt->length = 0;
    txt->owned = 0;
}

void TXTRecordDeallocate(TXTRecordRef *txtRecord) {
    struct txt_builder *txt = builder(txtRecord);
    if (txt->owned) free(txt->bytes);
    txt->bytes = NULL;
    txt->capacity = 0;
    txt->length = 0;
    txt->owned = 0;
}

/* The item (its length byte) whose key is `key`, compared without regard to case (RFC 6763 §6.4). */
static const uint8_t *find_item(uint16_t txtLen, const void *txtRecord, const char *key) {
    size_t key_length = strlen(key);
    const uint8_t *at = txtRecord;
    const uint8_t *end = at + txtLen;
    while (at < end) {
        size_t item = at[0];
        if (at + 1 + item > end) return NULL;
        if (item >= key_length && strncasecmp(key, (const char *)at + 1, key_length) == 0 &&
            (item == key_length || at[1 + key_length] == '=')) {
            return at;
        }
        at += 1 + item;
    }
    return NULL;
}

DNSServiceErrorType TXTRecordRemoveValue(TXTRecordRef *txtRecord, const char *key) {
    struct txt_builder *txt = builder(txtRecord);
    if (!key) return kDNSServiceErr_BadParam;
    const uint8_t *found = find_item(txt->length, txt->bytes, key);
    if (!found) return kDNSServiceErr_NoSuchKey;
    uint8_t *item = txt->bytes + (found - txt->bytes);
    size_t removed = 1 + (size_t)item[0];
    size_t after = txt->length - (size_t)(item - txt->bytes) - removed;
    memmove(item, item + removed, after);
    txt->length = (uint16_t)(txt->length - removed);
    return kDNSServiceErr_NoError;
}

DNSServiceErrorType TXTRecordSetValue(TXTRecordRef *txtRecord, const char *key, uint8_t valueSize,
                                      const void *value) {
    struct txt_builder *txt = builder(txtRecord);
    if (!key) return kDNSServiceErr_BadParam;
    size_t key_length = 0;
    /* Keys are printable US-ASCII without '=' (RFC 6763 §6.4), and not empty. */
    for (const char *c = key; *c; c++, key_length++) {
        if (*c < 0x20 || *c > 0x7E || *c == '=') return kDNSServiceErr_Invalid;
    }
    if (key_length == 0) return kDNSServiceErr_Invalid;
    /* A NULL value means a key without '=', whatever valueSize says (as Apple's implementation reads it). */
    size_t item = key_length + (value ? 1 + (size_t)valueSize : 0);
    if (item > 255) return kDNSServiceErr_Invalid;
    (void)TXTRecordRemoveValue(txtRecord, key);
    size_t needed = (size_t)txt->length + 1 + item;
    if (needed > 0xFFFF) return kDNSServiceErr_NoMemory;
    if (needed > txt->capacity) {
        size_t capacity = needed + 256 > 0xFFFF ? 0xFFFF : needed + 256;
        uint8_t *bytes = malloc(capacity);
        if (!bytes) return kDNSServiceErr_NoMemory;
        if (txt->length) memcpy(bytes, txt->bytes, txt->length);
        if (txt->owned) free(txt->bytes);
        txt->bytes = bytes;
        txt->capacity = (uint16_t)capacity;
        txt->owned = 1;
    }
    uint8_t *at = txt->bytes + txt->length;
    *at++ = (uint8_t)item;
    memcpy(at, key, key_length);
    at += key_length;
    if (value) {
        *at++ = '=';
        if (valueSize) memcpy(at, value, valueSize);
    }
    txt->length = (uint16_t)needed;
    return kDNSServiceErr_NoError;
}

uint16_t TXTRecordGetLength(const TXTRecordRef *txtRecord) {
    return ((const struct txt_builder *)(const void *)txtRecord)->length;
}

const void *TXTRecordGetBytesPtr(const TXTRecordRef *txtRecord) {
    return ((const struct txt_builder *)(const void *)txtRecord)->bytes;
}

int TXTRecordContainsKey(uint16_t txtLen, const void *txtRecord, const char *key) {
    return key && find_item(txtLen, txtRecord, key) ? 1 : 0;
}

const void *TXTRecordGetValuePtr(uint16_t txtLen, const void *txtRecord, const char *key, uint8_t *valueLen) {
    if (!key) return NULL;
    const uint8_t *item = find_item(txtLen, txtRecord, key);
    size_t key_length = strlen(key);
    /* A key without '=' has no value: NULL. "key=" has an empty one. */
    if (!item || item[0] <= key_length) return NULL;
    if (valueLen) *valueLen = (uint8_t)(item[0] - key_length - 1);
    return item + 1 + key_length + 1;
}

uint16_t TXTRecordGetCount(uint16_t txtLen, const void *txtRecord) {
    const uint8_t *at = txtRecord;
    const uint8_t *end = at + txtLen;
    uint16_t count = 0;
    while (at < end) {
        at += 1 + at[0];
        count++;
    }
    /* A last item that runs past the end makes the whole record malformed. */
    return at > end ? 0 : count;
}

DNSServiceErrorType TXTRecordGetItemAtIndex(uint16_t txtLen, const void *txtRecord, uint16_t index,
                                            uint16_t keyBufLen, char *key, uint8_t *valueLen, const void **value) {
    if (!key || !valueLen || !value) return kDNSServiceErr_BadParam;
    const uint8_t *at = txtRecord;
    const uint8_t *end = at + txtLen;
    for (uint16_t i = 0; i < index && at < end; i++) at += 1 + at[0];
    if (at >= end || at + 1 + at[0] > end) return kDNSServiceErr_Invalid;
    const uint8_t *text = at + 1;
    size_t item = at[0];
    const uint8_t *equals = memchr(text, '=', item);
    size_t key_length = equals ? (size_t)(equals - text) : item;
    if (key_length + 1 > keyBufLen) return kDNSServiceErr_NoMemory;
    memcpy(key, text, key_length);
    key[key_length] = '\0';
    if (equals) {
        *value = equals + 1;
        *valueLen = (uint8_t)(item - key_length - 1);
    } else {
        *value = NULL;
        *valueLen = 0;
    }
    return kDNSServiceErr_NoError;
}
