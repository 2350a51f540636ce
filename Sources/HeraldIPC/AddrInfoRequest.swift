/// `DNSServiceGetAddrInfo`: flags, interface index, protocols (IPv4 and/or IPv6), host name.
public struct AddrInfoRequest: IPCRequestMessage {
    public static let operation = RequestOperation.addrInfo

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    /// `ipv4`, `ipv6`, both, or neither (the daemon then picks from the host's configuration).
    public var `protocol`: DNSServiceProtocol
    public var hostname: String

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, protocol: DNSServiceProtocol = [],
        hostname: String
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.protocol = `protocol`
        self.hostname = hostname
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        `protocol` = DNSServiceProtocol(rawValue: try reader.readUInt32(.protocol))
        hostname = try reader.readString(.hostname)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeUInt32(`protocol`.rawValue)
        try writer.writeString(hostname, .hostname)
    }
}
