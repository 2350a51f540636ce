import HeraldIPC
import Testing

@Suite("dns_sd.h constants")
struct ConstantsTests {
    @Test("operation codes match dnssd_ipc.h")
    func operations() {
        let requests: [(RequestOperation, UInt32)] = [
            (.connection, 1), (.registerRecord, 2), (.removeRecord, 3), (.enumeration, 4), (.registerService, 5),
            (.browse, 6), (.resolve, 7), (.query, 8), (.reconfirm, 9), (.addRecord, 10), (.updateRecord, 11),
            (.setDomain, 12), (.getProperty, 13), (.portMapping, 14), (.addrInfo, 15), (.cancel, 63),
        ]
        for (op, code) in requests { #expect(op.rawValue == code) }
        #expect(RequestOperation.allCases.count == requests.count)
        let replies: [(ReplyOperation, UInt32)] = [
            (.enumeration, 64), (.registerService, 65), (.browse, 66), (.resolve, 67), (.query, 68),
            (.registerRecord, 69), (.getProperty, 70), (.portMapping, 71), (.addrInfo, 72), (.asyncError, 73),
        ]
        for (op, code) in replies { #expect(op.rawValue == code) }
        #expect(ReplyOperation.allCases.count == replies.count)
        for code: UInt32 in 16...19 { #expect(RequestOperation(rawValue: code) == nil) }
    }

    @Test("IPC flags match dnssd_ipc.h")
    func ipcFlags() {
        #expect(IPCFlags.noReply.rawValue == 1)
        #expect(IPCFlags.trailingTLVs.rawValue == 2)
        #expect(IPCFlags.noErrorSocket.rawValue == 4)
    }

    @Test("service flags match dns_sd.h")
    func serviceFlags() {
        let flags: [(DNSServiceFlags, UInt32)] = [
            (.moreComing, 0x1), (.queueRequest, 0x1), (.autoTrigger, 0x1), (.add, 0x2), (.default, 0x4),
            (.noAutoRename, 0x8), (.shared, 0x10), (.unique, 0x20), (.browseDomains, 0x40),
            (.registrationDomains, 0x80), (.longLivedQuery, 0x100), (.allowRemoteQuery, 0x200),
            (.forceMulticast, 0x400), (.force, 0x800), (.knownUnique, 0x800), (.returnIntermediates, 0x1000),
            (.privateOne, 0x2000), (.shareConnection, 0x4000), (.suppressUnusable, 0x8000), (.timeout, 0x10000),
            (.includeP2P, 0x20000), (.wakeOnResolve, 0x40000), (.backgroundTrafficClass, 0x80000),
            (.includeAWDL, 0x100000), (.enableDNSSEC, 0x200000), (.validate, 0x200000), (.secure, 0x200010),
            (.insecure, 0x200020), (.bogus, 0x200040), (.indeterminate, 0x200080), (.unicastResponse, 0x400000),
            (.validateOptional, 0x800000), (.wakeOnlyService, 0x1000000), (.thresholdOne, 0x2000000),
            (.thresholdFinder, 0x4000000), (.thresholdReached, 0x2000000), (.privateTwo, 0x8000000),
            (.privateThree, 0x10000000), (.privateFour, 0x20000000), (.privateFive, 0x40000000),
            (.answeredFromCache, 0x40000000), (.allowExpiredAnswers, 0x80000000), (.expiredAnswer, 0x80000000),
        ]
        for (flag, value) in flags { #expect(flag.rawValue == value) }
    }

    @Test("error codes match dns_sd.h and describe themselves")
    func errors() {
        let codes: [(DNSServiceError, Int32, String)] = [
            (.noError, 0, "NoError"), (.unknown, -65537, "Unknown"), (.noSuchName, -65538, "NoSuchName"),
            (.noMemory, -65539, "NoMemory"), (.badParam, -65540, "BadParam"), (.badReference, -65541, "BadReference"),
            (.badState, -65542, "BadState"), (.badFlags, -65543, "BadFlags"), (.unsupported, -65544, "Unsupported"),
            (.notInitialized, -65545, "NotInitialized"), (.alreadyRegistered, -65547, "AlreadyRegistered"),
            (.nameConflict, -65548, "NameConflict"), (.invalid, -65549, "Invalid"), (.firewall, -65550, "Firewall"),
            (.incompatible, -65551, "Incompatible"), (.badInterfaceIndex, -65552, "BadInterfaceIndex"),
            (.refused, -65553, "Refused"), (.noSuchRecord, -65554, "NoSuchRecord"), (.noAuth, -65555, "NoAuth"),
            (.noSuchKey, -65556, "NoSuchKey"), (.natTraversal, -65557, "NATTraversal"),
            (.doubleNAT, -65558, "DoubleNAT"), (.badTime, -65559, "BadTime"), (.badSig, -65560, "BadSig"),
            (.badKey, -65561, "BadKey"), (.transient, -65562, "Transient"),
            (.serviceNotRunning, -65563, "ServiceNotRunning"),
            (.natPortMappingUnsupported, -65564, "NATPortMappingUnsupported"),
            (.natPortMappingDisabled, -65565, "NATPortMappingDisabled"), (.noRouter, -65566, "NoRouter"),
            (.pollingMode, -65567, "PollingMode"), (.timeout, -65568, "Timeout"),
            (.defunctConnection, -65569, "DefunctConnection"), (.policyDenied, -65570, "PolicyDenied"),
            (.notPermitted, -65571, "NotPermitted"), (.staleData, -65572, "StaleData"),
        ]
        for (error, code, name) in codes {
            #expect(error.rawValue == code)
            #expect(error.name == name)
            #expect(DNSServiceError(wireValue: error.wireValue) == error)
        }
        #expect(DNSServiceError.allNamed.count == codes.count)
        #expect(DNSServiceError.noAuth.wireValue == 0xFFFE_FFED)
        #expect(DNSServiceError.noAuth.description == "NoAuth (-65555): not permitted")
        #expect(DNSServiceError(rawValue: -1).name == nil)
        #expect(DNSServiceError(rawValue: -1).description == "Error (-1): unrecognised error code")
    }

    @Test("interface index constants match dns_sd.h")
    func interfaceIndexes() {
        #expect(DNSServiceInterfaceIndex.any == 0)
        #expect(DNSServiceInterfaceIndex.localOnly == UInt32(bitPattern: -1))
        #expect(DNSServiceInterfaceIndex.unicast == UInt32(bitPattern: -2))
        #expect(DNSServiceInterfaceIndex.p2p == UInt32(bitPattern: -3))
        #expect(DNSServiceInterfaceIndex.ble == UInt32(bitPattern: -4))
        #expect(DNSServiceInterfaceIndex.infra == UInt32(bitPattern: -5))
    }

    @Test("protocol bits match dns_sd.h")
    func protocols() {
        #expect(DNSServiceProtocol.ipv4.rawValue == 1)
        #expect(DNSServiceProtocol.ipv6.rawValue == 2)
        #expect(DNSServiceProtocol.udp.rawValue == 0x10)
        #expect(DNSServiceProtocol.tcp.rawValue == 0x20)
    }

    @Test("errors describe what is wrong")
    func errorDescriptions() {
        #expect(
            IPCDecodeError.missingTerminator(field: .domain, offset: 19).description
                == "domain at body offset 19 has no terminating NUL before the end of the body")
        #expect(IPCDecodeError.unknownOperation(16).description == "unknown operation 16")
        #expect(IPCDecodeError.unsupportedRequest(.portMapping).description == "unsupported request: port-mapping (14)")
        #expect(IPCEncodeError.embeddedNUL(field: .name).description == "name contains a NUL byte")
    }
}
