/* Turning each kind of reply into the program's callback. The common fields (flags, interface, error)
 * are already read; strings and data point into the reply and live until the callback returns.
 * An async-error reply (no body) reaches the callback as its error, with empty fields. */
#include <netinet/in.h>
#include <string.h>

#include "internal.h"

uint32_t expected_reply(uint32_t request_op) {
    switch (request_op) {
    case OP_ENUMERATION: return REPLY_ENUMERATION;
    case OP_REGISTER_SERVICE: return REPLY_REGISTER_SERVICE;
    case OP_BROWSE: return REPLY_BROWSE;
    case OP_RESOLVE: return REPLY_RESOLVE;
    case OP_QUERY: return REPLY_QUERY;
    case OP_ADDR_INFO: return REPLY_ADDR_INFO;
    default: return 0;
    }
}

void handle_enumeration_reply(DNSServiceRef op, const struct reply_head *head, struct reader *body) {
    const char *domain = body ? reader_string(body) : "";
    if (body && body->failed) return;
    ((DNSServiceDomainEnumReply)op->callback)(op, head->flags, head->interface_index, head->error, domain,
                                              op->app_context);
}

void handle_register_reply(DNSServiceRef op, const struct reply_head *head, struct reader *body) {
    if (!op->callback) return;
    const char *name = body ? reader_string(body) : "";
    const char *regtype = body ? reader_string(body) : "";
    const char *domain = body ? reader_string(body) : "";
    if (body && body->failed) return;
    ((DNSServiceRegisterReply)op->callback)(op, head->flags, head->error, name, regtype, domain, op->app_context);
}

void handle_browse_reply(DNSServiceRef op, const struct reply_head *head, struct reader *body) {
    const char *name = body ? reader_string(body) : "";
    const char *regtype = body ? reader_string(body) : "";
    const char *domain = body ? reader_string(body) : "";
    if (body && body->failed) return;
    ((DNSServiceBrowseReply)op->callback)(op, head->flags, head->interface_index, head->error, name, regtype,
                                          domain, op->app_context);
}

void handle_resolve_reply(DNSServiceRef op, const struct reply_head *head, struct reader *body) {
    const char *fullname = "", *target = "";
    uint16_t port = 0, txt_length = 0;
    const uint8_t *txt = (const uint8_t *)"";
    if (body) {
        fullname = reader_string(body);
        target = reader_string(body);
        const uint8_t *port_bytes = reader_bytes(body, 2);
        /* The port stays in network byte order, as the API hands it over. */
        if (port_bytes) memcpy(&port, port_bytes, 2);
        txt_length = reader_u16(body);
        txt = reader_bytes(body, txt_length);
        if (body->failed) return;
    }
    ((DNSServiceResolveReply)op->callback)(op, head->flags, head->interface_index, head->error, fullname, target,
                                           port, txt_length, txt, op->app_context);
}

void handle_query_reply(DNSServiceRef op, const struct reply_head *head, struct reader *body) {
    const char *fullname = "";
    uint16_t rrtype = 0, rrclass = 0, rdlen = 0;
    const uint8_t *rdata = NULL;
    uint32_t ttl = 0;
    if (body) {
        fullname = reader_string(body);
        rrtype = reader_u16(body);
        rrclass = reader_u16(body);
        rdlen = reader_u16(body);
        rdata = reader_bytes(body, rdlen);
        ttl = reader_u32(body);
        if (body->failed) return;
    }
    ((DNSServiceQueryRecordReply)op->callback)(op, head->flags, head->interface_index, head->error, fullname, rrtype,
                                               rrclass, rdlen, rdata, ttl, op->app_context);
}

void handle_addr_info_reply(DNSServiceRef op, const struct reply_head *head, struct reader *body) {
    const char *hostname = "";
    uint16_t rrtype = 0, rdlen = 0;
    const uint8_t *rdata = NULL;
    uint32_t ttl = 0;
    if (body) {
        hostname = reader_string(body);
        rrtype = reader_u16(body);
        (void)reader_u16(body); /* class */
        rdlen = reader_u16(body);
        rdata = reader_bytes(body, rdlen);
        ttl = reader_u32(body);
        if (body->failed) return;
    }
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *address = NULL;
    if (head->error == kDNSServiceErr_NoError) {
        if (rrtype == kDNSServiceType_A && rdlen == 4) {
            memset(&v4, 0, sizeof v4);
            v4.sin_family = AF_INET;
            memcpy(&v4.sin_addr, rdata, 4);
            address = (const struct sockaddr *)&v4;
        } else if (rrtype == kDNSServiceType_AAAA && rdlen == 16) {
            memset(&v6, 0, sizeof v6);
            v6.sin6_family = AF_INET6;
            memcpy(&v6.sin6_addr, rdata, 16);
            /* A link-local address is only usable with the interface it was seen on. */
            if (IN6_IS_ADDR_LINKLOCAL(&v6.sin6_addr)) v6.sin6_scope_id = head->interface_index;
            address = (const struct sockaddr *)&v6;
        } else {
            return; /* not an address: nothing the callback can express */
        }
    } else if (head->error == kDNSServiceErr_NoSuchRecord) {
        /* A negative answer (kDNSServiceFlagsReturnIntermediates): the family that does not exist, with no address. */
        if (rrtype == kDNSServiceType_A) {
            memset(&v4, 0, sizeof v4);
            v4.sin_family = AF_INET;
            address = (const struct sockaddr *)&v4;
        } else if (rrtype == kDNSServiceType_AAAA) {
            memset(&v6, 0, sizeof v6);
            v6.sin6_family = AF_INET6;
            address = (const struct sockaddr *)&v6;
        }
    }
    ((DNSServiceGetAddrInfoReply)op->callback)(op, head->flags, head->interface_index, head->error, hostname, address,
                                               ttl, op->app_context);
}
