/// `DNSServiceRegister`: flags, interface index, name (empty: the computer's name), service type (with
/// optional `,subtype` list), domain, host (empty: this host), the port's two network-order bytes, and the
/// TXT record with its `uint16` length.
public struct RegisterServiceRequest: IPCRequestMessage {
    public static let operation = RequestOperation.registerService

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    /// The instance name (at most 255 bytes); empty to use the computer's name.
    public var name: String
    public var regtype: String
    public var domain: String
    public var host: String
    /// The port in host order (sent as its two network-order bytes).
    public var port: UInt16
    /// The TXT record data, in DNS wire form.
    public var txt: [UInt8]

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, name: String = "", regtype: String,
        domain: String = "", host: String = "", port: UInt16, txt: [UInt8] = []
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.name = name
        self.regtype = regtype
        self.domain = domain
        self.host = host
        self.port = port
        self.txt = txt
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        name = try reader.readString(.name, maximumLength: IPCConstants.maximumShortStringLength)
        regtype = try reader.readString(.regtype)
        domain = try reader.readString(.domain)
        host = try reader.readString(.host)
        port = try reader.readPort()
        txt = try reader.readLengthPrefixedData(length: .txtLength, data: .txtRecord)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        try writer.writeString(name, .name, maximumLength: IPCConstants.maximumShortStringLength)
        try writer.writeString(regtype, .regtype)
        try writer.writeString(domain, .domain)
        try writer.writeString(host, .host)
        writer.writePort(port)
        try writer.writeLengthPrefixedData(txt, .txtRecord)
    }
}
