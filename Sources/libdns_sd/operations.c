/* The API calls that start an operation on the daemon: each builds its request, sends it on a connection
 * of its own (status in band) or as a subordinate of a shared connection (status on a passed socket),
 * and returns the daemon's status. NoAuth from the daemon comes back unchanged: as the return value when
 * the request is refused outright, as the callback's error when the operation is parked. */
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Sends the request of a new reference and hands the reference to the program, or clears *sdRef. */
static DNSServiceErrorType start(DNSServiceRef *sdRef, DNSServiceRef ref, struct message *m) {
    DNSServiceErrorType status = service_ref_start(ref, m);
    *sdRef = status == kDNSServiceErr_NoError ? ref : NULL;
    return status;
}

static void begin(struct message *m, DNSServiceRef ref) {
    message_begin(m, ref->operation, ref->context, 0, service_ref_is_subordinate(ref));
}

DNSServiceErrorType DNSServiceCreateConnection(DNSServiceRef *sdRef) {
    if (!sdRef) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status = service_ref_create(sdRef, 0, OP_CONNECTION, NULL, NULL, NULL, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceEnumerateDomains(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t interfaceIndex,
                                               DNSServiceDomainEnumReply callBack, void *context) {
    if (!sdRef || !callBack) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status =
        service_ref_create(sdRef, flags, OP_ENUMERATION, handle_enumeration_reply, (void *)callBack, context, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceRegister(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t interfaceIndex,
                                       const char *name, const char *regtype, const char *domain, const char *host,
                                       uint16_t port, uint16_t txtLen, const void *txtRecord,
                                       DNSServiceRegisterReply callBack, void *context) {
    if (!sdRef || !regtype) return kDNSServiceErr_BadParam;
    if (txtLen && !txtRecord) return kDNSServiceErr_BadParam;
    /* Without a callback nobody could hear of a conflict, so the service must be free to rename. */
    if (!callBack && (flags & kDNSServiceFlagsNoAutoRename)) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status =
        service_ref_create(sdRef, flags, OP_REGISTER_SERVICE, handle_register_reply, (void *)callBack, context, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_string(&m, name ? name : "");
    message_put_string(&m, regtype);
    message_put_string(&m, domain ? domain : "");
    message_put_string(&m, host ? host : "");
    message_put_raw(&m, &port, 2); /* already in network byte order */
    message_put_data16(&m, txtRecord, txtLen);
    if (!callBack) message_set_ipc_flags(&m, IPC_FLAG_NO_REPLY);
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceBrowse(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t interfaceIndex,
                                     const char *regtype, const char *domain, DNSServiceBrowseReply callBack,
                                     void *context) {
    if (!sdRef || !regtype || !callBack) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status =
        service_ref_create(sdRef, flags, OP_BROWSE, handle_browse_reply, (void *)callBack, context, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_string(&m, regtype);
    message_put_string(&m, domain ? domain : "");
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceResolve(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t interfaceIndex,
                                      const char *name, const char *regtype, const char *domain,
                                      DNSServiceResolveReply callBack, void *context) {
    if (!sdRef || !name || !regtype || !domain || !callBack) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status =
        service_ref_create(sdRef, flags, OP_RESOLVE, handle_resolve_reply, (void *)callBack, context, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_string(&m, name);
    message_put_string(&m, regtype);
    message_put_string(&m, domain);
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceQueryRecord(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t interfaceIndex,
                                          const char *fullname, uint16_t rrtype, uint16_t rrclass,
                                          DNSServiceQueryRecordReply callBack, void *context) {
    if (!sdRef || !fullname || !callBack) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status =
        service_ref_create(sdRef, flags, OP_QUERY, handle_query_reply, (void *)callBack, context, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_string(&m, fullname);
    message_put_u16(&m, rrtype);
    message_put_u16(&m, rrclass);
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceGetAddrInfo(DNSServiceRef *sdRef, DNSServiceFlags flags, uint32_t interfaceIndex,
                                          DNSServiceProtocol protocol, const char *hostname,
                                          DNSServiceGetAddrInfoReply callBack, void *context) {
    if (!sdRef || !hostname || !callBack) return kDNSServiceErr_BadParam;
    DNSServiceRef ref;
    DNSServiceErrorType status =
        service_ref_create(sdRef, flags, OP_ADDR_INFO, handle_addr_info_reply, (void *)callBack, context, &ref);
    if (status) return status;
    struct message m;
    begin(&m, ref);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_u32(&m, protocol);
    message_put_string(&m, hostname);
    return start(sdRef, ref, &m);
}

DNSServiceErrorType DNSServiceReconfirmRecord(DNSServiceFlags flags, uint32_t interfaceIndex, const char *fullname,
                                              uint16_t rrtype, uint16_t rrclass, uint16_t rdlen, const void *rdata) {
    if (!fullname || (rdlen && !rdata)) return kDNSServiceErr_BadParam;
    int fd = connection_open();
    if (fd < 0) return kDNSServiceErr_ServiceNotRunning;
    struct message m;
    message_begin(&m, OP_RECONFIRM, 0, 0, 0);
    message_put_u32(&m, flags);
    message_put_u32(&m, interfaceIndex);
    message_put_string(&m, fullname);
    message_put_u16(&m, rrtype);
    message_put_u16(&m, rrclass);
    message_put_data16(&m, rdata, rdlen);
    DNSServiceErrorType status = connection_send_first(fd, &m);
    message_free(&m);
    close(fd);
    return status;
}

DNSServiceErrorType DNSServiceGetProperty(const char *property, void *result, uint32_t *size) {
    if (!property || !result || !size) return kDNSServiceErr_BadParam;
    int fd = connection_open();
    if (fd < 0) return kDNSServiceErr_ServiceNotRunning;
    struct message m;
    message_begin(&m, OP_GET_PROPERTY, 0, 0, 0);
    message_put_string(&m, property);
    /* The answer is raw: the status, then (on success) the value's length and the value. */
    DNSServiceErrorType status = connection_send_first(fd, &m);
    message_free(&m);
    uint32_t length = 0;
    if (status == kDNSServiceErr_NoError) {
        uint8_t word[4];
        if (connection_read_exactly(fd, word, 4, 30000) != 0) {
            status = kDNSServiceErr_ServiceNotRunning;
        } else {
            length = (uint32_t)word[0] << 24 | (uint32_t)word[1] << 16 | (uint32_t)word[2] << 8 | word[3];
            uint32_t wanted = length < *size ? length : *size;
            if (connection_read_exactly(fd, result, wanted, 30000) != 0) status = kDNSServiceErr_ServiceNotRunning;
        }
    }
    close(fd);
    if (status != kDNSServiceErr_NoError) return status;
    /* The daemon version travels big-endian; the program gets it in its own byte order. */
    if (strcmp(property, "DaemonVersion") == 0 && *size >= 4 && length >= 4) {
        uint32_t value;
        memcpy(&value, result, 4);
        value = ntohl(value);
        memcpy(result, &value, 4);
    }
    *size = length;
    return kDNSServiceErr_NoError;
}
