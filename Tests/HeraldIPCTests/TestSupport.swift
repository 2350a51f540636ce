import HeraldIPC

/// Bytes from hex digits; spaces are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// A string's bytes and its terminating NUL, as on the wire.
func cstr(_ text: String) -> [UInt8] {
    Array(text.utf8) + [0]
}

/// A header as a frame would carry it, for hand-built vectors.
func headerBytes(
    dataLength: Int, flags: UInt32 = 0, op: UInt32, context: String = "0102030405060708", regIndex: UInt32 = 0
) -> [UInt8] {
    func word(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
    return word(1) + word(UInt32(dataLength)) + word(flags) + word(op) + hex(context) + word(regIndex)
}

let sampleContext = ClientContext(rawValue: 0x0102_0304_0506_0708)

/// Splits a frame's bytes into header and body and decodes the request.
func decodeRequestFrame(_ bytes: [UInt8], connection: IPCConnectionState = .new) throws -> DecodedRequest {
    let header = try IPCHeader.decode(bytes)
    return try DecodedRequest.decode(
        header: header, body: Array(bytes.dropFirst(IPCHeader.length)), connection: connection)
}

/// Splits a frame's bytes into header and body and decodes the reply.
func decodeReplyFrame(_ bytes: [UInt8]) throws -> Reply {
    let header = try IPCHeader.decode(bytes)
    return try Reply.decode(header: header, body: Array(bytes.dropFirst(IPCHeader.length)))
}
