/// A `DNSServiceRegisterRecord` result: flags, interface index and error only. Its header echoes the client
/// context of the register-record request, which is how the client finds the record.
public struct RegisterRecordReply: IPCReplyMessage {
    public static let operation = ReplyOperation.registerRecord

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var error: DNSServiceError

    public init(flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, error: DNSServiceError = .noError) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.error = error
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeError(error)
    }
}
