/*
 * The dns_sd.h API that Herald's libdns_sd implements: the types, constants and entry points a program
 * compiled against Debian's avahi-compat dns_sd.h (or Apple's) calls, declared here so that the library
 * builds without any development package installed. Only what the library needs is declared; the values
 * and signatures are those of the public API (the ABI programs are already compiled against).
 */
#ifndef HERALD_DNS_SD_API_H
#define HERALD_DNS_SD_API_H

#include <stdint.h>
#include <sys/socket.h>

#define DNSSD_EXPORT __attribute__((visibility("default")))

typedef struct _DNSServiceRef_t *DNSServiceRef;
typedef struct _DNSRecordRef_t *DNSRecordRef;
typedef uint32_t DNSServiceFlags;
typedef uint32_t DNSServiceProtocol;
typedef int32_t DNSServiceErrorType;

/* Flags (values of the public API). */
enum {
    kDNSServiceFlagsMoreComing = 0x1,
    kDNSServiceFlagsAdd = 0x2,
    kDNSServiceFlagsDefault = 0x4,
    kDNSServiceFlagsNoAutoRename = 0x8,
    kDNSServiceFlagsShareConnection = 0x4000,
};

/* Error codes (the values every dnssd implementation uses). */
enum {
    kDNSServiceErr_NoError = 0,
    kDNSServiceErr_Unknown = -65537,
    kDNSServiceErr_NoSuchName = -65538,
    kDNSServiceErr_NoMemory = -65539,
    kDNSServiceErr_BadParam = -65540,
    kDNSServiceErr_BadReference = -65541,
    kDNSServiceErr_BadState = -65542,
    kDNSServiceErr_BadFlags = -65543,
    kDNSServiceErr_Unsupported = -65544,
    kDNSServiceErr_NotInitialized = -65545,
    kDNSServiceErr_Invalid = -65549,
    kDNSServiceErr_Incompatible = -65551,
    kDNSServiceErr_NoSuchRecord = -65554,
    kDNSServiceErr_NoAuth = -65555,
    kDNSServiceErr_NoSuchKey = -65556,
    kDNSServiceErr_ServiceNotRunning = -65563,
};

enum { kDNSServiceType_A = 1, kDNSServiceType_AAAA = 28 };

/* Debian's header defines kDNSServiceMaxDomainName as 1005 (Apple's newer one as 1009): programs built
 * against Debian's size their buffers for the smaller value, so the library never writes more. */
#define HERALD_MAX_DOMAIN_NAME 1005

typedef union _TXTRecordRef_t {
    char PrivateData[16];
    char *ForceNaturalAlignment;
} TXTRecordRef;

typedef void (*DNSServiceDomainEnumReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType,
                                          const char *replyDomain, void *context);
typedef void (*DNSServiceRegisterReply)(DNSServiceRef, DNSServiceFlags, DNSServiceErrorType, const char *name,
                                        const char *regtype, const char *domain, void *context);
typedef void (*DNSServiceBrowseReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType,
                                      const char *serviceName, const char *regtype, const char *replyDomain,
                                      void *context);
typedef void (*DNSServiceResolveReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType,
                                       const char *fullname, const char *hosttarget, uint16_t port,
                                       uint16_t txtLen, const unsigned char *txtRecord, void *context);
typedef void (*DNSServiceRegisterRecordReply)(DNSServiceRef, DNSRecordRef, DNSServiceFlags, DNSServiceErrorType,
                                              void *context);
typedef void (*DNSServiceQueryRecordReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType,
                                           const char *fullname, uint16_t rrtype, uint16_t rrclass,
                                           uint16_t rdlen, const void *rdata, uint32_t ttl, void *context);
typedef void (*DNSServiceGetAddrInfoReply)(DNSServiceRef, DNSServiceFlags, uint32_t, DNSServiceErrorType,
                                           const char *hostname, const struct sockaddr *address, uint32_t ttl,
                                           void *context);

DNSSD_EXPORT int DNSServiceRefSockFD(DNSServiceRef sdRef);
DNSSD_EXPORT DNSServiceErrorType DNSServiceProcessResult(DNSServiceRef sdRef);
DNSSD_EXPORT void DNSServiceRefDeallocate(DNSServiceRef sdRef);
DNSSD_EXPORT DNSServiceErrorType DNSServiceEnumerateDomains(DNSServiceRef *sdRef, DNSServiceFlags flags,
    uint32_t interfaceIndex, DNSServiceDomainEnumReply callBack, void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceRegister(DNSServiceRef *sdRef, DNSServiceFlags flags,
    uint32_t interfaceIndex, const char *name, const char *regtype, const char *domain, const char *host,
    uint16_t port, uint16_t txtLen, const void *txtRecord, DNSServiceRegisterReply callBack, void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceAddRecord(DNSServiceRef sdRef, DNSRecordRef *RecordRef,
    DNSServiceFlags flags, uint16_t rrtype, uint16_t rdlen, const void *rdata, uint32_t ttl);
DNSSD_EXPORT DNSServiceErrorType DNSServiceUpdateRecord(DNSServiceRef sdRef, DNSRecordRef RecordRef,
    DNSServiceFlags flags, uint16_t rdlen, const void *rdata, uint32_t ttl);
DNSSD_EXPORT DNSServiceErrorType DNSServiceRemoveRecord(DNSServiceRef sdRef, DNSRecordRef RecordRef,
    DNSServiceFlags flags);
DNSSD_EXPORT DNSServiceErrorType DNSServiceBrowse(DNSServiceRef *sdRef, DNSServiceFlags flags,
    uint32_t interfaceIndex, const char *regtype, const char *domain, DNSServiceBrowseReply callBack,
    void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceResolve(DNSServiceRef *sdRef, DNSServiceFlags flags,
    uint32_t interfaceIndex, const char *name, const char *regtype, const char *domain,
    DNSServiceResolveReply callBack, void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceCreateConnection(DNSServiceRef *sdRef);
DNSSD_EXPORT DNSServiceErrorType DNSServiceRegisterRecord(DNSServiceRef sdRef, DNSRecordRef *RecordRef,
    DNSServiceFlags flags, uint32_t interfaceIndex, const char *fullname, uint16_t rrtype, uint16_t rrclass,
    uint16_t rdlen, const void *rdata, uint32_t ttl, DNSServiceRegisterRecordReply callBack, void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceQueryRecord(DNSServiceRef *sdRef, DNSServiceFlags flags,
    uint32_t interfaceIndex, const char *fullname, uint16_t rrtype, uint16_t rrclass,
    DNSServiceQueryRecordReply callBack, void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceReconfirmRecord(DNSServiceFlags flags, uint32_t interfaceIndex,
    const char *fullname, uint16_t rrtype, uint16_t rrclass, uint16_t rdlen, const void *rdata);
DNSSD_EXPORT int DNSServiceConstructFullName(char *fullName, const char *service, const char *regtype,
    const char *domain);
DNSSD_EXPORT DNSServiceErrorType DNSServiceGetAddrInfo(DNSServiceRef *sdRef, DNSServiceFlags flags,
    uint32_t interfaceIndex, DNSServiceProtocol protocol, const char *hostname,
    DNSServiceGetAddrInfoReply callBack, void *context);
DNSSD_EXPORT DNSServiceErrorType DNSServiceGetProperty(const char *property, void *result, uint32_t *size);

DNSSD_EXPORT void TXTRecordCreate(TXTRecordRef *txtRecord, uint16_t bufferLen, void *buffer);
DNSSD_EXPORT void TXTRecordDeallocate(TXTRecordRef *txtRecord);
DNSSD_EXPORT DNSServiceErrorType TXTRecordSetValue(TXTRecordRef *txtRecord, const char *key, uint8_t valueSize,
    const void *value);
DNSSD_EXPORT DNSServiceErrorType TXTRecordRemoveValue(TXTRecordRef *txtRecord, const char *key);
DNSSD_EXPORT uint16_t TXTRecordGetLength(const TXTRecordRef *txtRecord);
DNSSD_EXPORT const void *TXTRecordGetBytesPtr(const TXTRecordRef *txtRecord);
DNSSD_EXPORT int TXTRecordContainsKey(uint16_t txtLen, const void *txtRecord, const char *key);
DNSSD_EXPORT const void *TXTRecordGetValuePtr(uint16_t txtLen, const void *txtRecord, const char *key,
    uint8_t *valueLen);
DNSSD_EXPORT uint16_t TXTRecordGetCount(uint16_t txtLen, const void *txtRecord);
DNSSD_EXPORT DNSServiceErrorType TXTRecordGetItemAtIndex(uint16_t txtLen, const void *txtRecord, uint16_t index,
    uint16_t keyBufLen, char *key, uint8_t *valueLen, const void **value);

#endif
