import HeraldIPC
import Testing

/// One example of every request, with the connection state it is sent on.
let everyRequest: [(Request, IPCConnectionState)] = [
    (.connection(ConnectionRequest()), .new),
    (
        .registerRecord(
            RegisterRecordRequest(
                recordIndex: 7, flags: .shared, interfaceIndex: DNSServiceInterfaceIndex.localOnly,
                fullname: "_services._dns-sd._udp.local.", rrtype: 12, rrclass: 1,
                rdata: Array(repeating: 0xAB, count: 300),
                ttl: 4500)), .established
    ),
    (.removeRecord(RemoveRecordRequest(recordIndex: 7)), .established),
    (.enumeration(EnumerationRequest(flags: .browseDomains)), .new),
    (
        .registerService(
            RegisterServiceRequest(
                flags: [.noAutoRename], interfaceIndex: 3, name: "Wohnzimmer Drucker (2)",
                regtype: "_ipp._tcp,_universal", domain: "local.", host: "drucker.local.", port: 631,
                txt: [9] + Array("txtvers=1".utf8))), .new
    ),
    (.browse(BrowseRequest(flags: .shareConnection, regtype: "_printer._sub._http._tcp")), .established),
    (.resolve(ResolveRequest(name: "My Files.", regtype: "_smb._tcp", domain: "local.")), .new),
    (.query(QueryRecordRequest(name: "ünïcode.local.", rrtype: 16, rrclass: 1)), .new),
    (.reconfirm(ReconfirmRequest(fullname: "host.local.", rrtype: 1, rdata: [10, 0, 0, 2])), .new),
    (.addRecord(AddRecordRequest(recordIndex: 1, rrtype: 10, rdata: [1, 2, 3], ttl: 0)), .established),
    (.updateRecord(UpdateRecordRequest(recordIndex: 1, rdata: [], ttl: 60)), .established),
    (.setDomain(SetDomainRequest(domain: "example.com.")), .new),
    (.getProperty(GetPropertyRequest(name: "DaemonVersion")), .new),
    (.addrInfo(AddrInfoRequest(protocol: [.ipv4, .ipv6], hostname: "nas.local.")), .new),
    (.cancel(CancelRequest()), .established),
]

/// One example of every framed reply.
let everyReply: [Reply] = [
    .enumeration(EnumerationReply(flags: .add, domain: "local.")),
    .registerService(
        RegisterServiceReply(
            flags: .add, interfaceIndex: 0, name: "Game (2)", regtype: "_tictactoe._tcp.", domain: "local.")),
    .browse(
        BrowseReply(
            flags: [.add, .moreComing], interfaceIndex: 2, name: "Küche", regtype: "_raop._tcp.", domain: "local.")),
    .resolve(
        ResolveReply(
            interfaceIndex: 2, fullname: "Game\\032\\(2\\)._tictactoe._tcp.local.", hostTarget: "peer.local.",
            port: 65535,
            txt: [0])),
    .query(
        QueryRecordReply(
            flags: .add, interfaceIndex: 2, fullname: "x.local.", rrtype: 16, rrclass: 0x8001, rdata: [0], ttl: 4500)),
    .registerRecord(RegisterRecordReply(error: .nameConflict)),
    .addrInfo(
        AddrInfoReply(
            flags: .add, interfaceIndex: 2, hostname: "host.local.", rrtype: 1, rrclass: 1, rdata: [10, 0, 0, 9],
            ttl: 120)),
    .asyncError(AsyncErrorReply(error: .badParam)),
]

@Suite("Round trips")
struct RoundTripTests {
    @Test("every request type survives encode then decode", arguments: everyRequest.indices)
    func request(index: Int) throws {
        let (request, connection) = everyRequest[index]
        let frame = try request.encodeFrame(context: sampleContext, connection: connection)
        #expect(frame.header.dataLength == UInt32(frame.frame.body.count))
        #expect(frame.header.requestOperation == request.operation)
        let decoded = try decodeRequestFrame(frame.bytes, connection: connection)
        #expect(decoded.request == request)
        #expect(decoded.header == frame.header)
        #expect(decoded.ignoredTrailingByteCount == 0)
        #expect(try Request.decode(header: frame.header, body: frame.frame.body, connection: connection) == request)
    }

    @Test("every request type also survives with trailing TLVs", arguments: everyRequest.indices)
    func requestWithTLVs(index: Int) throws {
        let (request, connection) = everyRequest[index]
        let tlvs = [IPCTLV(type: IPCTLV.aaaaPolicy, value: [0, 0, 0, 1]), IPCTLV(type: 0x7777, value: [])]
        let frame = try request.encodeFrame(context: sampleContext, connection: connection, tlvs: tlvs)
        #expect(frame.header.flags.contains(.trailingTLVs))
        let decoded = try decodeRequestFrame(frame.bytes, connection: connection)
        #expect(decoded.request == request)
        #expect(decoded.trailingTLVs == tlvs)
        #expect(decoded.trailingTLVs.first?.integerValue == 1)
    }

    @Test("every request type survives the no-error-socket flag", arguments: everyRequest.indices)
    func requestWithoutErrorSocket(index: Int) throws {
        let (request, connection) = everyRequest[index]
        let frame = try request.encodeFrame(context: sampleContext, flags: .noErrorSocket, connection: connection)
        #expect(frame.passesErrorSocket == false)
        let decoded = try decodeRequestFrame(frame.bytes, connection: connection)
        #expect(decoded.request == request)
        let op = request.operation
        #expect(decoded.statusReturn == (op == .cancel || op == .getProperty ? .none : .asyncErrorReply))
    }

    @Test("each typed request decodes through its own type")
    func typedDecode() throws {
        let browse = BrowseRequest(regtype: "_http._tcp")
        let frame = try browse.encodeFrame()
        #expect(try BrowseRequest.decode(header: frame.header, body: frame.frame.body) == browse)
        #expect(throws: IPCDecodeError.operationMismatch(expected: 7, found: 6)) {
            try ResolveRequest.decode(header: frame.header, body: frame.frame.body)
        }
    }

    @Test("every reply type survives encode then decode", arguments: everyReply.indices)
    func reply(index: Int) throws {
        let reply = everyReply[index]
        let bytes = try reply.encodeFrame(context: sampleContext)
        let header = try IPCHeader.decode(bytes)
        #expect(header.context == sampleContext)
        #expect(header.flags == [])
        #expect(header.registrationIndex == 0)
        #expect(header.replyOperation == reply.operation)
        #expect(try decodeReplyFrame(bytes) == reply)
    }

    @Test("each typed reply decodes through its own type, and ignores trailing bytes")
    func typedReplyDecode() throws {
        let reply = BrowseReply(flags: .add, name: "a", regtype: "_b._tcp.", domain: "local.")
        let frame = try reply.frame(context: .zero)
        #expect(try BrowseReply.decode(header: frame.header, body: frame.body) == reply)
        #expect(throws: IPCDecodeError.operationMismatch(expected: 67, found: 66)) {
            try ResolveReply.decode(header: frame.header, body: frame.body)
        }
        var longer = frame
        longer.body += hex("0007 0002 ABCD")
        longer.header.dataLength += 6
        longer.header.flags = .trailingTLVs
        #expect(try BrowseReply.decode(header: longer.header, body: longer.body) == reply)
    }

    @Test("every DNSServiceError code survives the status word")
    func statusWords() throws {
        for error in DNSServiceError.allNamed {
            #expect(try StatusWord.decode(StatusWord.encode(error)) == error)
        }
        #expect(try StatusWord.decode(hex("00000001")) == DNSServiceError(rawValue: 1))
    }

    @Test("get-property answers of any length survive")
    func propertyAnswers() throws {
        for value in [[], [1], hex("0102030405")] as [[UInt8]] {
            let reply = GetPropertyReply(status: .noError, value: value)
            #expect(try GetPropertyReply.decode(reply.encoded) == reply)
            #expect(GetPropertyReply.totalLength(ofPrefix: reply.encoded) == reply.encoded.count)
        }
    }
}
