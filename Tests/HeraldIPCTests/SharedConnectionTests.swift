import HeraldIPC
import Testing

/// The error-return convention of mDNSResponder's uds_daemon.c `read_msg` and dnssd_clientstub.c
/// `create_hdr`/`deliver_request`.
@Suite("Status return and shared connections")
struct SharedConnectionTests {
    @Test("the first request on a connection gets its status in band, with no placeholder")
    func firstRequest() throws {
        let frame = try BrowseRequest(regtype: "_http._tcp").encodeFrame()
        #expect(frame.frame.body == hex("00000000 00000000") + cstr("_http._tcp") + cstr(""))
        #expect(try decodeRequestFrame(frame.bytes).statusReturn == .inBand)
    }

    @Test("a subordinate request starts with an empty string and passes its error socket with the last byte")
    func subordinate() throws {
        let request = ResolveRequest(flags: .shareConnection, name: "a", regtype: "_b._tcp", domain: "local.")
        let frame = try request.encodeFrame(context: sampleContext, connection: .established)
        #expect(frame.frame.body.first == 0)
        #expect(frame.passesErrorSocket)
        let plain = try request.encodeFrame(context: sampleContext)
        #expect(frame.frame.body == [0] + plain.frame.body)
        let decoded = try decodeRequestFrame(frame.bytes, connection: .established)
        #expect(decoded.statusReturn == .passedSocket)
        #expect(decoded.request == .resolve(request))
    }

    @Test("an old client's named error socket path is reported")
    func namedSocket() throws {
        let frame = try AddRecordRequest(recordIndex: 2, rrtype: 16, rdata: [0]).encodeFrame(
            connection: .established, errorReturnPath: "/var/tmp/dnssd_result_socket.42-001-000123")
        #expect(frame.passesErrorSocket == false)
        let decoded = try decodeRequestFrame(frame.bytes, connection: .established)
        #expect(decoded.statusReturn == .namedSocket(path: "/var/tmp/dnssd_result_socket.42-001-000123"))
    }

    @Test("no-error-socket requests carry no placeholder and report errors as async error replies")
    func noErrorSocket() throws {
        let request = RegisterRecordRequest(
            recordIndex: 0, flags: [.unique, .queueRequest], fullname: "h.local.", rrtype: 1, rdata: [1, 2, 3, 4],
            ttl: 120)
        let frame = try request.encodeFrame(flags: .noErrorSocket, connection: .established)
        #expect(frame.frame.body.prefix(4) == [0, 0, 0, 0x21])
        #expect(frame.passesErrorSocket == false)
        let decoded = try decodeRequestFrame(frame.bytes, connection: .established)
        #expect(decoded.statusReturn == .asyncErrorReply)
        #expect(decoded.request == .registerRecord(request))
    }

    @Test("cancel has an empty body and no status, even on an established connection")
    func cancel() throws {
        let frame = try CancelRequest().encodeFrame(context: sampleContext, connection: .established)
        #expect(frame.bytes == headerBytes(dataLength: 0, op: 63))
        #expect(frame.passesErrorSocket == false)
        let decoded = try decodeRequestFrame(frame.bytes, connection: .established)
        #expect(decoded.statusReturn == .none)
        #expect(decoded.request == .cancel(CancelRequest()))
    }

    @Test("the connection request is an empty body")
    func connection() throws {
        let frame = try ConnectionRequest().encodeFrame(context: sampleContext)
        #expect(frame.bytes == headerBytes(dataLength: 0, op: 1))
        #expect(try decodeRequestFrame(frame.bytes).statusReturn == .inBand)
    }

    @Test("the placeholder rule: established, no noErrorSocket flag, not cancel")
    func rule() {
        for op in RequestOperation.allCases {
            #expect(IPCConnectionState.new.bodyStartsWithErrorReturnPath(operation: op.rawValue, flags: []) == false)
            #expect(
                IPCConnectionState.established.bodyStartsWithErrorReturnPath(operation: op.rawValue, flags: [])
                    == (op != .cancel))
            #expect(
                IPCConnectionState.established.bodyStartsWithErrorReturnPath(
                    operation: op.rawValue, flags: .noErrorSocket) == false)
        }
    }

    @Test("trailing TLVs are read leniently, as the daemon reads them")
    func tlvs() throws {
        let base = try BrowseRequest(regtype: "_http._tcp").encodeFrame()
        // One good item, then one that claims more bytes than remain.
        let tail = hex("0003 0004 00000001") + hex("0005 0010 AABB")
        var header = base.header
        header.flags = .trailingTLVs
        header.dataLength += UInt32(tail.count)
        let decoded = try DecodedRequest.decode(header: header, body: base.frame.body + tail)
        #expect(decoded.trailingTLVs == [IPCTLV(type: 3, value: [0, 0, 0, 1])])
        #expect(decoded.ignoredTrailingByteCount == 6)

        // Without the flag, trailing bytes are ignored and not read as TLVs.
        header.flags = []
        let plain = try DecodedRequest.decode(header: header, body: base.frame.body + tail)
        #expect(plain.trailingTLVs.isEmpty)
        #expect(plain.ignoredTrailingByteCount == tail.count)
    }

    @Test("TLV integer values follow the 1, 2 and 4 byte forms")
    func tlvIntegers() {
        #expect(IPCTLV(type: 2, value: [1]).integerValue == 1)
        #expect(IPCTLV(type: 2, value: [1, 2]).integerValue == 0x0102)
        #expect(IPCTLV(type: 2, value: [1, 2, 3, 4]).integerValue == 0x0102_0304)
        #expect(IPCTLV(type: 2, value: [1, 2, 3]).integerValue == nil)
        #expect(IPCTLV.parseAll(hex("0001 0000 0002")) == [IPCTLV(type: 1, value: [])])
    }
}
