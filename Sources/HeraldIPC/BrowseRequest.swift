/// `DNSServiceBrowse`: flags, interface index, service type (possibly with one `,subtype`), domain
/// (empty for the default).
public struct BrowseRequest: IPCRequestMessage {
    public static let operation = RequestOperation.browse

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var regtype: String
    public var domain: String

    public init(flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, regtype: String, domain: String = "") {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.regtype = regtype
        self.domain = domain
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        regtype = try reader.readString(.regtype)
        domain = try reader.readString(.domain)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        try writer.writeString(regtype, .regtype)
        try writer.writeString(domain, .domain)
    }
}
