import HeraldIPC
import Testing

/// Decodes a request body under a header built for it.
private func decodeBody(
    op: UInt32, _ body: [UInt8], flags: IPCFlags = [], connection: IPCConnectionState = .new
) throws(IPCDecodeError) -> DecodedRequest {
    let header = IPCHeader(dataLength: UInt32(body.count), flags: flags, operation: op, context: sampleContext)
    return try DecodedRequest.decode(header: header, body: body, connection: connection)
}

@Suite("Decode errors")
struct DecodeErrorTests {
    @Test("a missing NUL is reported with the field and where it starts")
    func missingNUL() {
        let body = hex("00000000 00000000") + cstr("_http._tcp") + Array("local".utf8)
        #expect(throws: IPCDecodeError.missingTerminator(field: .domain, offset: 19)) {
            try decodeBody(op: 6, body)
        }
    }

    @Test("a truncated uint32 is reported with what it needed and what was left")
    func truncatedUInt32() {
        #expect(throws: IPCDecodeError.truncated(field: .interfaceIndex, offset: 4, needed: 4, available: 2)) {
            try decodeBody(op: 6, hex("00000000 0000"))
        }
        #expect(throws: IPCDecodeError.truncated(field: .flags, offset: 0, needed: 4, available: 0)) {
            try decodeBody(op: 4, [])
        }
        let addNoTTL = hex("00") + hex("00000000 0010 0001 41 000000")
        #expect(throws: IPCDecodeError.truncated(field: .ttl, offset: 10, needed: 4, available: 3)) {
            try decodeBody(op: 10, addNoTTL, connection: .established)
        }
    }

    @Test("a truncated uint16 is reported")
    func truncatedUInt16() {
        let body = hex("00000000 00000000") + cstr("x.local.") + hex("00")
        #expect(throws: IPCDecodeError.truncated(field: .rrtype, offset: 17, needed: 2, available: 1)) {
            try decodeBody(op: 8, body)
        }
    }

    @Test("an rdata length past the end is reported with the declared and available lengths")
    func rdataPastEnd() {
        let body = hex("00") + hex("00000020 00000000") + cstr("h.local.") + hex("0001 0001 0064 0A000001")
        #expect(throws: IPCDecodeError.lengthPastEnd(field: .rdata, offset: 24, declared: 100, available: 4)) {
            try decodeBody(op: 2, body, connection: .established)
        }
    }

    @Test("a TXT length past the end is reported")
    func txtPastEnd() {
        let body = hex("00000000 00000000") + cstr("") + cstr("_http._tcp") + cstr("") + cstr("") + hex("0050 0010 01")
        #expect(throws: IPCDecodeError.lengthPastEnd(field: .txtRecord, offset: 26, declared: 16, available: 1)) {
            try decodeBody(op: 5, body)
        }
    }

    @Test("a missing port is a truncated port")
    func missingPort() {
        let body = hex("00000000 00000000") + cstr("") + cstr("_http._tcp") + cstr("") + cstr("") + hex("00")
        #expect(throws: IPCDecodeError.truncated(field: .port, offset: 22, needed: 2, available: 1)) {
            try decodeBody(op: 5, body)
        }
    }

    @Test("unknown operations are refused, including Apple-private and reply codes")
    func unknownOperation() {
        for op: UInt32 in [0, 16, 17, 18, 19, 62, 64, 73, 99, UInt32.max] {
            #expect(throws: IPCDecodeError.unknownOperation(op)) { try decodeBody(op: op, []) }
        }
    }

    @Test("port mapping is refused as unsupported")
    func portMapping() {
        let body = hex("00000000 00000000 00000010 1F90 1F90 00001C20")
        #expect(throws: IPCDecodeError.unsupportedRequest(.portMapping)) { try decodeBody(op: 14, body) }
    }

    @Test("a body of another length than datalen is refused")
    func bodyLengthMismatch() {
        let header = IPCHeader(dataLength: 10, operation: 6)
        #expect(throws: IPCDecodeError.bodyLengthMismatch(declared: 10, actual: 9)) {
            try DecodedRequest.decode(header: header, body: [UInt8](repeating: 0, count: 9))
        }
        #expect(throws: IPCDecodeError.bodyLengthMismatch(declared: 10, actual: 9)) {
            try Reply.decode(header: IPCHeader(dataLength: 10, operation: 66), body: [UInt8](repeating: 0, count: 9))
        }
    }

    @Test("strings longer than the daemon's buffers are refused")
    func stringTooLong() {
        let longName = String(repeating: "n", count: 256)
        let body =
            hex("00000000 00000000") + cstr(longName) + cstr("_http._tcp") + cstr("") + cstr("") + hex("0050 0000")
        #expect(throws: IPCDecodeError.stringTooLong(field: .name, offset: 8, length: 256, maximum: 255)) {
            try decodeBody(op: 5, body)
        }
        let longDomain = String(repeating: "d", count: 1009)
        #expect(throws: IPCDecodeError.stringTooLong(field: .regtype, offset: 8, length: 1009, maximum: 1008)) {
            try decodeBody(op: 6, hex("00000000 00000000") + cstr(longDomain) + cstr(""))
        }
        let okDomain = String(repeating: "d", count: 1008)
        #expect((try? decodeBody(op: 6, hex("00000000 00000000") + cstr(okDomain) + cstr(""))) != nil)
    }

    @Test("strings that are not UTF-8 are refused")
    func invalidUTF8() {
        let body = hex("00000000 00000000") + hex("5F C3 28 00") + cstr("")
        #expect(throws: IPCDecodeError.invalidUTF8(field: .regtype, offset: 8)) { try decodeBody(op: 6, body) }
    }

    @Test("record operations and cancel are refused as the first request of a connection")
    func needsEstablishedConnection() {
        #expect(throws: IPCDecodeError.requiresEstablishedConnection(.addRecord)) {
            try decodeBody(op: 10, hex("00000000 0001 0000 00000000"))
        }
        #expect(throws: IPCDecodeError.requiresEstablishedConnection(.cancel)) { try decodeBody(op: 63, []) }
        #expect(throws: IPCEncodeError.requiresEstablishedConnection(.removeRecord)) {
            try RemoveRecordRequest(recordIndex: 1).encodeFrame()
        }
    }

    @Test("a shared-connection request without its path placeholder is refused")
    func missingPlaceholder() {
        #expect(throws: IPCDecodeError.missingTerminator(field: .errorReturnPath, offset: 0)) {
            try decodeBody(op: 6, [], connection: .established)
        }
        let tooLong = cstr(String(repeating: "p", count: 108))
        #expect(throws: IPCDecodeError.stringTooLong(field: .errorReturnPath, offset: 0, length: 108, maximum: 107)) {
            try decodeBody(op: 6, tooLong, connection: .established)
        }
    }

    @Test("reply bodies are checked as strictly")
    func replyErrors() {
        let truncated = hex("00000000 00000000")
        #expect(throws: IPCDecodeError.truncated(field: .error, offset: 8, needed: 4, available: 0)) {
            try Reply.decode(header: IPCHeader(dataLength: 8, operation: 66), body: truncated)
        }
        let noNUL = hex("00000000 00000000 00000000") + Array("name".utf8)
        #expect(throws: IPCDecodeError.missingTerminator(field: .name, offset: 12)) {
            try Reply.decode(header: IPCHeader(dataLength: UInt32(noNUL.count), operation: 66), body: noNUL)
        }
        let shortRdata = hex("00000000 00000000 00000000") + cstr("x.") + hex("0001 0001 0010 00")
        #expect(throws: IPCDecodeError.lengthPastEnd(field: .rdata, offset: 21, declared: 16, available: 1)) {
            try Reply.decode(header: IPCHeader(dataLength: UInt32(shortRdata.count), operation: 72), body: shortRdata)
        }
        #expect(throws: IPCDecodeError.unsupportedReply(.portMapping)) {
            try Reply.decode(header: IPCHeader(dataLength: 0, operation: 71), body: [])
        }
        #expect(throws: IPCDecodeError.unknownOperation(6)) {
            try Reply.decode(header: IPCHeader(dataLength: 0, operation: 6), body: [])
        }
    }

    @Test("a get-property answer is bounded and checked")
    func propertyErrors() {
        #expect(throws: IPCDecodeError.truncated(field: .propertyLength, offset: 4, needed: 4, available: 2)) {
            try GetPropertyReply.decode(hex("00000000 0000"))
        }
        #expect(throws: IPCDecodeError.lengthPastEnd(field: .propertyValue, offset: 8, declared: 4, available: 2)) {
            try GetPropertyReply.decode(hex("00000000 00000004 0001"))
        }
        #expect(
            throws: IPCDecodeError.valueTooLong(field: .propertyValue, offset: 4, length: 0x7FFF_FFFF, maximum: 256)
        ) {
            try GetPropertyReply.decode(hex("00000000 7FFFFFFF"))
        }
    }

    @Test("every truncation of every request is a typed error, never a crash", arguments: everyRequest.indices)
    func everyTruncation(index: Int) throws {
        let (request, connection) = everyRequest[index]
        let frame = try request.encodeFrame(context: sampleContext, connection: connection)
        let body = frame.frame.body
        for cut in 0..<body.count {
            var header = frame.header
            header.dataLength = UInt32(cut)
            #expect(throws: IPCDecodeError.self) {
                try DecodedRequest.decode(header: header, body: Array(body.prefix(cut)), connection: connection)
            }
        }
    }

    @Test("every truncation of every reply is a typed error, never a crash", arguments: everyReply.indices)
    func everyReplyTruncation(index: Int) throws {
        let frame = try everyReply[index].message.frame(context: sampleContext)
        // The async error reply needs only its first three words.
        let needed = everyReply[index].operation == .asyncError ? 12 : frame.body.count
        for cut in 0..<needed {
            var header = frame.header
            header.dataLength = UInt32(cut)
            #expect(throws: IPCDecodeError.self) {
                try Reply.decode(header: header, body: Array(frame.body.prefix(cut)))
            }
        }
    }

    @Test("arbitrary bytes never crash the request decoder")
    func fuzz() {
        var generator = SplitMix64(seed: 0x4845_5241_4C44)
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 64)
            let body = (0..<count).map { _ in
                UInt8(truncatingIfNeeded: generator.next() % 4 == 0 ? 0 : generator.next())
            }
            let op = UInt32(generator.next() % 20) == 19 ? 63 : UInt32(generator.next() % 16)
            let flags = IPCFlags(rawValue: UInt32(generator.next() % 8))
            let connection: IPCConnectionState = generator.next() % 2 == 0 ? .new : .established
            _ = try? decodeBody(op: op, body, flags: flags, connection: connection)
            _ = try? Reply.decode(header: IPCHeader(dataLength: UInt32(count), operation: 64 + op % 10), body: body)
        }
    }
}

/// A small deterministic random source for the fuzz loop.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
