import HeraldIPC
import Testing

@Suite("Encode errors")
struct EncodeErrorTests {
    @Test("a name holding a NUL byte (possible from the network) is refused, not truncated")
    func embeddedNUL() {
        #expect(throws: IPCEncodeError.embeddedNUL(field: .name)) {
            try BrowseReply(flags: .add, name: "evil\u{0}name", regtype: "_http._tcp.", domain: "local.")
                .encodeFrame(context: .zero)
        }
    }

    @Test("strings over the receiver's limits are refused")
    func tooLong() {
        let name = String(repeating: "x", count: 256)
        #expect(throws: IPCEncodeError.stringTooLong(field: .name, length: 256, maximum: 255)) {
            try RegisterServiceRequest(name: name, regtype: "_http._tcp", port: 80).encodeFrame()
        }
        #expect(throws: IPCEncodeError.stringTooLong(field: .errorReturnPath, length: 200, maximum: 107)) {
            try BrowseRequest(regtype: "_a._tcp").encodeFrame(
                connection: .established, errorReturnPath: String(repeating: "p", count: 200))
        }
    }

    @Test("data over 65535 bytes is refused; a 65535-byte record fits the default maximum")
    func dataTooLong() throws {
        #expect(throws: IPCEncodeError.dataTooLong(field: .rdata, length: 65_536)) {
            try AddRecordRequest(recordIndex: 1, rrtype: 16, rdata: [UInt8](repeating: 0, count: 65_536))
                .encodeFrame(connection: .established)
        }
        let big = RegisterRecordRequest(
            recordIndex: 1, flags: .unique, fullname: String(repeating: "a", count: 1008), rrtype: 16,
            rdata: [UInt8](repeating: 0, count: 65_535), ttl: 1)
        let frame = try big.encodeFrame(connection: .established)
        #expect(try decodeRequestFrame(frame.bytes, connection: .established).request == .registerRecord(big))
        #expect(throws: IPCEncodeError.messageTooLarge(length: Int(frame.header.dataLength), maximum: 65_536)) {
            try big.encodeFrame(connection: .established, maximumDataLength: 65_536)
        }
    }
}
