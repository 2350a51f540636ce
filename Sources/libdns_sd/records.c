/* Individual records: extra records of a registration (DNSServiceAddRecord), updates of a registration's
 * TXT record or of an added record (DNSServiceUpdateRecord), records registered directly on a shared
 * connection (DNSServiceRegisterRecord), and their removal. Every such request acts on an established
 * connection, so its status comes back on a passed socket; the daemon's status is returned as it is. */
#include <stdlib.h>

#include "internal.h"

static DNSRecordRef find_record(DNSServiceRef ref, DNSRecordRef wanted) {
    for (DNSRecordRef record = ref->records; record; record = record->next) {
        if (record == wanted && record->magic == RECORD_REF_MAGIC) return record;
    }
    return NULL;
}

static void unlink_record(DNSServiceRef ref, DNSRecordRef record) {
    DNSRecordRef *link = &ref->records;
    while (*link && *link != record) link = &(*link)->next;
    if (*link) *link = record->next;
    record->magic = 0;
    free(record);
}

static DNSRecordRef new_record(DNSServiceRef ref) {
    DNSRecordRef record = calloc(1, sizeof *record);
    if (!record) return NULL;
    record->magic = RECORD_REF_MAGIC;
    record->owner = ref;
    record->index = ref->next_record_index++;
    record->context = service_ref_new_context(ref);
    record->next = ref->records;
    ref->records = record;
    return record;
}

static DNSServiceErrorType send_record_request(DNSServiceRef ref, struct message *m) {
    if (ref->defunct || (ref->primary && ref->primary->defunct)) {
        message_free(m);
        return kDNSServiceErr_ServiceNotRunning;
    }
    DNSServiceErrorType status = connection_send_passing_socket(ref->fd, m);
    message_free(m);
    return status;
}

DNSServiceErrorType DNSServiceAddRecord(DNSServiceRef sdRef, DNSRecordRef *RecordRef, DNSServiceFlags flags,
                                        uint16_t rrtype, uint16_t rdlen, const void *rdata, uint32_t ttl) {
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    if (!ref || ref->operation != OP_REGISTER_SERVICE) return kDNSServiceErr_BadReference;
    if (!RecordRef || (rdlen && !rdata)) return kDNSServiceErr_BadParam;
    DNSRecordRef record = new_record(ref);
    if (!record) return kDNSServiceErr_NoMemory;
    struct message m;
    message_begin(&m, OP_ADD_RECORD, ref->context, record->index, 1);
    message_put_u32(&m, flags);
    message_put_u16(&m, rrtype);
    message_put_data16(&m, rdata, rdlen);
    message_put_u32(&m, ttl);
    DNSServiceErrorType status = send_record_request(ref, &m);
    if (status != kDNSServiceErr_NoError) {
        unlink_record(ref, record);
        *RecordRef = NULL;
        return status;
    }
    *RecordRef = record;
    return kDNSServiceErr_NoError;
}

DNSServiceErrorType DNSServiceUpdateRecord(DNSServiceRef sdRef, DNSRecordRef RecordRef, DNSServiceFlags flags,
                                           uint16_t rdlen, const void *rdata, uint32_t ttl) {
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    if (!ref) return kDNSServiceErr_BadReference;
    if (rdlen && !rdata) return kDNSServiceErr_BadParam;
    uint32_t index = TXT_RECORD_INDEX; /* no record: the registration's own TXT record */
    if (RecordRef) {
        DNSRecordRef record = find_record(ref, RecordRef);
        if (!record) return kDNSServiceErr_BadReference;
        index = record->index;
    }
    struct message m;
    message_begin(&m, OP_UPDATE_RECORD, ref->context, index, 1);
    message_put_u32(&m, flags);
    message_put_data16(&m, rdata, rdlen);
    message_put_u32(&m, ttl);
    return send_record_request(ref, &m);
}

DNSServiceErrorType DNSServiceRemoveRecord(DNSServiceRef sdRef, DNSRecordRef RecordRef, DNSServiceFlags flags) {
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    if (!ref) return kDNSServiceErr_BadReference;
    if (!RecordRef) return kDNSServiceErr_BadParam;
    DNSRecordRef record = find_record(ref, RecordRef);
    if (!record) return kDNSServiceErr_BadReference;
    struct message m;
    message_begin(&m, OP_REMOVE_RECORD, ref->context, record->index, 1);
    message_put_u32(&m, flags);
    DNSServiceErrorType status = send_record_request(ref, &m);
    /* BadReference from the daemon means it holds no such record any more: either way the record is gone. */
    if (status == kDNSServiceErr_BadReference) status = kDNSServiceErr_NoError;
    if (status == kDNSServiceErr_NoError) unlink_record(ref, record);
    return status;
}

DNSServiceErrorType DNSServiceRegisterRecord(DNSServiceRef sdRef, DNSRecordRef *RecordRef, DNSServiceFlags flags,
                                             uint32_t interfaceIndex, const char *fullname, uint16_t rrtype,
                                             uint16_t rrclass, uint16_t rdlen, const void *rdata, uint32_t ttl,
                                             DNSServiceRegisterRecordReply callBack, void *context) {
    DNSServiceRef ref = service_ref_is_valid(sdRef);
    /* Records are registered on a connection from DNSServiceCreateConnection. */
    if (!ref || ref->operation != OP_CONNECTION || ref->primary) return kDNSServiceErr_BadReference;
    if (!RecordRef || !fullname || !callBack || (rdlen && !rdata)) return kDNSServiceErr_BadParam;
    DNSRecordRef record = new_record(ref);
    if (!record) return kDNSServiceErr_NoMemory;
    record->callback = callBack;
    record->app_context = context;
    struct message m;
    /* The record's own context comes back in the register-record reply. */
    message_begin(&m, OP_REGISTER_RECORD, record->context, record->index, 1);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_string(&m, fullname);
    message_put_u16(&m, rrtype);
    message_put_u16(&m, rrclass);
    message_put_data16(&m, rdata, rdlen);
    message_put_u32(&m, ttl);
    DNSServiceErrorType status = send_record_request(ref, &m);
    if (status != kDNSServiceErr_NoError) {
        unlink_record(ref, record);
        *RecordRef = NULL;
        return status;
    }
    *RecordRef = record;
    return kDNSServiceErr_NoError;
}

void records_deliver_reply(DNSServiceRef connection, const struct reply_head *head) {
    for (DNSRecordRef record = connection->records; record; record = record->next) {
        if (record->context == head->context) {
            if (record->callback)
                record->callback(connection, record, head->flags, head->error, record->app_context);
            return;
        }
    }
}
