/// An address lookup result, laid out like a query result: flags, interface index, error, host name, type
/// (A or AAAA), class, rdata (the 4 or 16 address bytes) with its `uint16` length, TTL.
public struct AddrInfoReply: IPCReplyMessage {
    public static let operation = ReplyOperation.addrInfo

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var error: DNSServiceError
    public var hostname: String
    public var rrtype: UInt16
    public var rrclass: UInt16
    public var rdata: [UInt8]
    public var ttl: UInt32

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, error: DNSServiceError = .noError,
        hostname: String = "", rrtype: UInt16 = 0, rrclass: UInt16 = 0, rdata: [UInt8] = [], ttl: UInt32 = 0
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.error = error
        self.hostname = hostname
        self.rrtype = rrtype
        self.rrclass = rrclass
        self.rdata = rdata
        self.ttl = ttl
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
        hostname = try reader.readString(.hostname)
        (rrtype, rrclass, rdata) = try reader.readRecordFields()
        ttl = try reader.readUInt32(.ttl)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeError(error)
        try writer.writeString(hostname, .hostname)
        try writer.writeRecordFields(rrtype: rrtype, rrclass: rrclass, rdata: rdata)
        writer.writeUInt32(ttl)
    }
}
