/// A domain enumeration result: flags (`add`, `default`), interface index, error, domain.
public struct EnumerationReply: IPCReplyMessage {
    public static let operation = ReplyOperation.enumeration

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var error: DNSServiceError
    public var domain: String

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, error: DNSServiceError = .noError,
        domain: String = ""
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.error = error
        self.domain = domain
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
        domain = try reader.readString(.domain)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeError(error)
        try writer.writeString(domain, .domain)
    }
}
