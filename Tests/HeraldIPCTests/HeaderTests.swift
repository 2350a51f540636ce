import HeraldIPC
import Testing

@Suite("IPC header")
struct HeaderTests {
    @Test("the header is 28 big-endian bytes with the context copied verbatim")
    func layout() throws {
        let header = IPCHeader(
            dataLength: 0x1234, flags: [.noReply, .trailingTLVs, .noErrorSocket], operation: 6,
            context: ClientContext(rawValue: 0xDEAD_BEEF_0011_2233), registrationIndex: 0xFFFF_FFFF)
        #expect(header.encoded == hex("00000001 00001234 00000007 00000006 DEADBEEF00112233 FFFFFFFF"))
        #expect(try IPCHeader.decode(header.encoded) == header)
        #expect(header.requestOperation == .browse)
        #expect(header.replyOperation == nil)
    }

    @Test("the client context round-trips byte for byte")
    func context() {
        let context = ClientContext(bytes: hex("F0E1D2C3B4A59687"))!
        #expect(context.bytes == hex("F0E1D2C3B4A59687"))
        #expect(ClientContext(bytes: [1, 2, 3]) == nil)
        #expect(context.description == "f0e1d2c3b4a59687")
        #expect(ClientContext.zero.bytes == [UInt8](repeating: 0, count: 8))
    }

    @Test("writing a context into an encoded frame changes those 8 bytes and nothing else")
    func contextRewrite() throws {
        let frame = IPCFrame(
            header: IPCHeader(
                dataLength: 3, flags: [.noReply], operation: 66,
                context: ClientContext(rawValue: 1), registrationIndex: 9),
            body: [0xAA, 0xBB, 0xCC])
        var bytes = frame.encoded
        let other = ClientContext(rawValue: 0x0102_0304_0506_0708)
        bytes.withUnsafeMutableBytes { IPCHeader.writeContext(other, into: $0) }
        var expected = frame
        expected.header.context = other
        #expect(bytes == expected.encoded)
        #expect(try IPCHeader.decode(bytes).context == other)
        #expect(Array(bytes[16..<24]) == other.bytes)
    }

    @Test("a short header is refused with its length")
    func truncated() {
        let bytes = Array(headerBytes(dataLength: 0, op: 1).prefix(27))
        #expect(throws: IPCDecodeError.headerTruncated(length: 27)) { try IPCHeader.decode(bytes) }
        #expect(throws: IPCDecodeError.headerTruncated(length: 0)) { try IPCHeader.decode([UInt8]()) }
    }

    @Test("a version other than 1 is refused")
    func wrongVersion() {
        var bytes = headerBytes(dataLength: 0, op: 1)
        bytes[3] = 2
        #expect(throws: IPCDecodeError.unsupportedVersion(2)) { try IPCHeader.decode(bytes) }
        bytes[0] = 1
        bytes[3] = 0
        #expect(throws: IPCDecodeError.unsupportedVersion(0x0100_0000)) { try IPCHeader.decode(bytes) }
    }

    @Test("datalen over the maximum is refused before any body is read")
    func hugeDataLength() {
        let huge = headerBytes(dataLength: Int(UInt32.max), op: 6)
        #expect(throws: IPCDecodeError.dataLengthTooLarge(declared: UInt32.max, maximum: 70_000)) {
            try IPCHeader.decode(huge)
        }
        let justOver = headerBytes(dataLength: 65_537, op: 6)
        #expect(throws: IPCDecodeError.dataLengthTooLarge(declared: 65_537, maximum: 65_536)) {
            try IPCHeader.decode(justOver, maximumDataLength: 65_536)
        }
        #expect((try? IPCHeader.decode(headerBytes(dataLength: 65_536, op: 6), maximumDataLength: 65_536)) != nil)
        #expect((try? IPCHeader.decode(headerBytes(dataLength: 70_000, op: 6))) != nil)
    }

    @Test("unknown flag bits and operation codes survive header decoding")
    func unknownBits() throws {
        let header = try IPCHeader.decode(headerBytes(dataLength: 0, flags: 0x8000_0001, op: 99))
        #expect(header.flags.rawValue == 0x8000_0001)
        #expect(header.flags.contains(.noReply))
        #expect(header.operation == 99)
        #expect(header.requestOperation == nil)
    }
}
