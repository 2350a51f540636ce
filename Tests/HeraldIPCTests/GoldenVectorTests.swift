import HeraldIPC
import Testing

/// Byte vectors written out by hand from the layout in mDNSResponder's dnssd_ipc.h, dnssd_clientstub.c and
/// uds_daemon.c, checked in both directions.
@Suite("Golden vectors")
struct GoldenVectorTests {
    @Test("browse request: flags, interface, type, domain")
    func browse() throws {
        let body = hex("00000000 00000000") + cstr("_http._tcp") + cstr("local.")
        #expect(body.count == 26)
        let expected = headerBytes(dataLength: 26, op: 6) + body
        let request = BrowseRequest(regtype: "_http._tcp", domain: "local.")
        let frame = try request.encodeFrame(context: sampleContext)
        #expect(frame.bytes == expected)
        #expect(frame.passesErrorSocket == false)
        let decoded = try decodeRequestFrame(expected)
        #expect(decoded.request == .browse(request))
        #expect(decoded.statusReturn == .inBand)
        #expect(decoded.header.context == sampleContext)
    }

    @Test("register request with TXT: raw port bytes, TXT length and data")
    func registerWithTXT() throws {
        let txt: [UInt8] = [7] + Array("level=3".utf8)
        let body =
            hex("00000008 00000002") + cstr("Game") + cstr("_tictactoe._tcp") + cstr("") + cstr("")
            + hex("1F90") + hex("0008") + txt
        #expect(body.count == 43)
        let expected = headerBytes(dataLength: 43, op: 5) + body
        let request = RegisterServiceRequest(
            flags: .noAutoRename, interfaceIndex: 2, name: "Game", regtype: "_tictactoe._tcp", port: 8080, txt: txt)
        #expect(try request.encodeFrame(context: sampleContext).bytes == expected)
        let decoded = try decodeRequestFrame(expected)
        #expect(decoded.request == .registerService(request))
        guard case .registerService(let r) = decoded.request else {
            Issue.record("not a registration")
            return
        }
        #expect(r.port == 8080)
        #expect(r.txt == txt)
    }

    @Test("register request on a shared connection: leading empty path, socket passed with the last byte")
    func registerOnSharedConnection() throws {
        let body =
            hex("00") + hex("00004000 00000000") + cstr("") + cstr("_http._tcp") + cstr("") + cstr("")
            + hex("0050") + hex("0000")
        let expected = headerBytes(dataLength: body.count, op: 5) + body
        let request = RegisterServiceRequest(flags: .shareConnection, regtype: "_http._tcp", port: 80)
        let frame = try request.encodeFrame(context: sampleContext, connection: .established)
        #expect(frame.bytes == expected)
        #expect(frame.passesErrorSocket)
        let decoded = try decodeRequestFrame(expected, connection: .established)
        #expect(decoded.request == .registerService(request))
        #expect(decoded.statusReturn == .passedSocket)
    }

    @Test("resolve reply: full name, target, raw port, TXT")
    func resolveReply() throws {
        let txt: [UInt8] = [7] + Array("level=3".utf8)
        let body =
            hex("00000000 00000002 00000000") + cstr("Game._tictactoe._tcp.local.") + cstr("host.local.")
            + hex("1F90") + hex("0008") + txt
        #expect(body.count == 64)
        let expected = headerBytes(dataLength: 64, op: 67) + body
        let reply = ResolveReply(
            interfaceIndex: 2, fullname: "Game._tictactoe._tcp.local.", hostTarget: "host.local.", port: 8080, txt: txt)
        #expect(try reply.encodeFrame(context: sampleContext) == expected)
        #expect(try decodeReplyFrame(expected) == .resolve(reply))
    }

    @Test("query reply: name, type, class, rdata length, rdata, TTL")
    func queryReply() throws {
        let body = hex("00000002 00000003 00000000") + cstr("printer.local.") + hex("0001 0001 0004 C0A80114 00000078")
        #expect(body.count == 41)
        let expected = headerBytes(dataLength: 41, op: 68) + body
        let reply = QueryRecordReply(
            flags: .add, interfaceIndex: 3, fullname: "printer.local.", rrtype: 1, rrclass: 1,
            rdata: [192, 168, 1, 20], ttl: 120)
        #expect(try reply.encodeFrame(context: sampleContext) == expected)
        #expect(try decodeReplyFrame(expected) == .query(reply))
    }

    @Test("addrinfo reply: host name, AAAA, 16 address bytes, TTL")
    func addrInfoReply() throws {
        let address = hex("FE800000000000000000000000000001")
        let body =
            hex("00000002 00000002 00000000") + cstr("host.local.") + hex("001C 0001 0010") + address
            + hex("00000078")
        #expect(body.count == 50)
        let expected = headerBytes(dataLength: 50, op: 72) + body
        let reply = AddrInfoReply(
            flags: .add, interfaceIndex: 2, hostname: "host.local.", rrtype: 28, rrclass: 1, rdata: address, ttl: 120)
        #expect(try reply.encodeFrame(context: sampleContext) == expected)
        #expect(try decodeReplyFrame(expected) == .addrInfo(reply))
    }

    @Test("async error: zero flags and interface, the error, two empty strings, zero port and TXT length")
    func asyncError() throws {
        let body = hex("00000000 00000000 FFFEFFED 00 00 0000 0000")
        #expect(body.count == 18)
        let expected = headerBytes(dataLength: 18, op: 73) + body
        let reply = AsyncErrorReply(error: .noAuth)
        #expect(try reply.encodeFrame(context: sampleContext) == expected)
        #expect(try decodeReplyFrame(expected) == .asyncError(reply))
        #expect(try decodeReplyFrame(expected).error == .noAuth)
    }

    @Test("browse reply carrying NoAuth for a parked operation")
    func parkedBrowseReply() throws {
        let body = hex("00000000 00000000 FFFEFFED") + cstr("") + cstr("") + cstr("")
        let expected = headerBytes(dataLength: body.count, op: 66) + body
        let reply = BrowseReply(error: .noAuth)
        #expect(try reply.encodeFrame(context: sampleContext) == expected)
        #expect(try decodeReplyFrame(expected) == .browse(reply))
    }

    @Test("get-property DaemonVersion: request, and the raw answer status 0, length 4, value")
    func getPropertyDaemonVersion() throws {
        let requestBytes = headerBytes(dataLength: 14, op: 13) + cstr("DaemonVersion")
        let request = GetPropertyRequest(name: GetPropertyRequest.daemonVersion)
        #expect(try request.encodeFrame(context: sampleContext).bytes == requestBytes)
        let decoded = try decodeRequestFrame(requestBytes)
        #expect(decoded.request == .getProperty(request))
        #expect(decoded.statusReturn == .none)

        let answer = hex("00000000 00000004 00FD72D0")
        let reply = GetPropertyReply.daemonVersion(16_610_000)
        #expect(reply.encoded == answer)
        #expect(try GetPropertyReply.decode(answer) == reply)
        #expect(try GetPropertyReply.decode(answer).uint32Value == 16_610_000)
        #expect(GetPropertyReply.totalLength(ofPrefix: Array(answer.prefix(3))) == nil)
        #expect(GetPropertyReply.totalLength(ofPrefix: Array(answer.prefix(7))) == nil)
        #expect(GetPropertyReply.totalLength(ofPrefix: Array(answer.prefix(8))) == 12)
    }

    @Test("get-property for an unknown name: the BadParam status word alone")
    func getPropertyUnknown() throws {
        let answer = hex("FFFEFFFC")
        #expect(GetPropertyReply.unknownProperty.encoded == answer)
        #expect(GetPropertyReply.totalLength(ofPrefix: answer) == 4)
        let decoded = try GetPropertyReply.decode(answer)
        #expect(decoded.status == .badParam)
        #expect(decoded.uint32Value == nil)
    }

    @Test("the in-band status word is the error code, big-endian, with no header")
    func statusWord() throws {
        #expect(StatusWord.encode(.noError) == hex("00000000"))
        #expect(StatusWord.encode(.noAuth) == hex("FFFEFFED"))
        #expect(try StatusWord.decode(hex("FFFEFFED")) == .noAuth)
        #expect(throws: IPCDecodeError.truncated(field: .status, offset: 0, needed: 4, available: 3)) {
            try StatusWord.decode(hex("FFFEFF"))
        }
    }

    @Test("register-record reply: three words, echoing the record request's context")
    func registerRecordReply() throws {
        let expected =
            headerBytes(dataLength: 12, op: 69, context: "0000000700000000") + hex("00000000 00000001 00000000")
        let reply = RegisterRecordReply(interfaceIndex: 1)
        let context = ClientContext(bytes: hex("0000000700000000"))!
        #expect(try reply.encodeFrame(context: context) == expected)
        #expect(try decodeReplyFrame(expected) == .registerRecord(reply))
    }

    @Test("enumeration reply: three words and the domain")
    func enumerationReply() throws {
        let expected = headerBytes(dataLength: 19, op: 64) + hex("00000006 00000000 00000000") + cstr("local.")
        let reply = EnumerationReply(flags: [.add, .default], domain: "local.")
        #expect(try reply.encodeFrame(context: sampleContext) == expected)
        #expect(try decodeReplyFrame(expected) == .enumeration(reply))
    }

    @Test("register-record request: reg_index in the header, rdata and TTL after the class")
    func registerRecordRequest() throws {
        let body = hex("00") + hex("00000020 00000000") + cstr("host.local.") + hex("0001 0001 0004 0A000001 00000078")
        let expected = headerBytes(dataLength: body.count, op: 2, regIndex: 3) + body
        let request = RegisterRecordRequest(
            recordIndex: 3, flags: .unique, fullname: "host.local.", rrtype: 1, rdata: [10, 0, 0, 1], ttl: 120)
        #expect(try request.encodeFrame(context: sampleContext, connection: .established).bytes == expected)
        #expect(try decodeRequestFrame(expected, connection: .established).request == .registerRecord(request))
    }

    @Test("update of the primary TXT record uses reg_index 0xFFFFFFFF")
    func updatePrimaryTXT() throws {
        let body = hex("00") + hex("00000000 0004 03613D31 00000000")
        let expected =
            headerBytes(dataLength: body.count, op: 11, context: "0000000000000000", regIndex: 0xFFFF_FFFF)
            + body
        let request = UpdateRecordRequest(rdata: [3, 0x61, 0x3D, 0x31])
        #expect(try request.encodeFrame(connection: .established).bytes == expected)
        #expect(try decodeRequestFrame(expected, connection: .established).request == .updateRecord(request))
    }
}
