/// `DNSServiceResolve`: flags, interface index, instance name, service type, domain.
public struct ResolveRequest: IPCRequestMessage {
    public static let operation = RequestOperation.resolve

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    /// The instance name, unescaped (at most 255 bytes).
    public var name: String
    public var regtype: String
    public var domain: String

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, name: String, regtype: String, domain: String
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.name = name
        self.regtype = regtype
        self.domain = domain
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        name = try reader.readString(.name, maximumLength: IPCConstants.maximumShortStringLength)
        regtype = try reader.readString(.regtype)
        domain = try reader.readString(.domain)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        try writer.writeString(name, .name, maximumLength: IPCConstants.maximumShortStringLength)
        try writer.writeString(regtype, .regtype)
        try writer.writeString(domain, .domain)
    }
}
