/// A record query result: flags (`add` for an answer, absent for a removal), interface index, error, full
/// name, type, class, rdata with its `uint16` length, TTL.
public struct QueryRecordReply: IPCReplyMessage {
    public static let operation = ReplyOperation.query

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var error: DNSServiceError
    public var fullname: String
    public var rrtype: UInt16
    public var rrclass: UInt16
    public var rdata: [UInt8]
    public var ttl: UInt32

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, error: DNSServiceError = .noError,
        fullname: String = "", rrtype: UInt16 = 0, rrclass: UInt16 = 0, rdata: [UInt8] = [], ttl: UInt32 = 0
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.error = error
        self.fullname = fullname
        self.rrtype = rrtype
        self.rrclass = rrclass
        self.rdata = rdata
        self.ttl = ttl
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
        fullname = try reader.readString(.fullname)
        (rrtype, rrclass, rdata) = try reader.readRecordFields()
        ttl = try reader.readUInt32(.ttl)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeError(error)
        try writer.writeString(fullname, .fullname)
        try writer.writeRecordFields(rrtype: rrtype, rrclass: rrclass, rdata: rdata)
        writer.writeUInt32(ttl)
    }
}
