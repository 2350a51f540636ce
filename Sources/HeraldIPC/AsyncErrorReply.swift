/// A request's failure status, sent as a frame when the request asked for no error socket
/// (`IPCFlags.noErrorSocket`); `NoError` is never sent this way.
///
/// mDNSResponder writes flags 0, interface index 0, the error, then two empty strings and two zero `uint16`s
/// (an empty resolve-shaped tail); readers only need the first three words.
public struct AsyncErrorReply: IPCReplyMessage {
    public static let operation = ReplyOperation.asyncError

    public var error: DNSServiceError

    public init(error: DNSServiceError) {
        self.error = error
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        _ = try reader.readFlags()
        _ = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags([])
        writer.writeUInt32(0)
        writer.writeError(error)
        writer.writeRaw([0, 0])  // empty name, empty target
        writer.writeUInt16(0)  // port
        writer.writeUInt16(0)  // TXT length
    }
}
