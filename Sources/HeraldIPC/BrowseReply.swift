/// A browse result: flags (`add` for a new instance), interface index, error, instance name, service type,
/// domain.
public struct BrowseReply: IPCReplyMessage {
    public static let operation = ReplyOperation.browse

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var error: DNSServiceError
    public var name: String
    public var regtype: String
    public var domain: String

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, error: DNSServiceError = .noError,
        name: String = "", regtype: String = "", domain: String = ""
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.error = error
        self.name = name
        self.regtype = regtype
        self.domain = domain
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
        name = try reader.readString(.name, maximumLength: IPCConstants.maximumShortStringLength)
        regtype = try reader.readString(.regtype)
        domain = try reader.readString(.domain)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeError(error)
        try writer.writeString(name, .name, maximumLength: IPCConstants.maximumShortStringLength)
        try writer.writeString(regtype, .regtype)
        try writer.writeString(domain, .domain)
    }
}
