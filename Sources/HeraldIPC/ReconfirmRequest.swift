/// `DNSServiceReconfirmRecord`: flags, interface index, full name, type, class, rdata with its `uint16`
/// length (no TTL).
public struct ReconfirmRequest: IPCRequestMessage {
    public static let operation = RequestOperation.reconfirm

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var fullname: String
    public var rrtype: UInt16
    public var rrclass: UInt16
    public var rdata: [UInt8]

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, fullname: String, rrtype: UInt16,
        rrclass: UInt16 = 1, rdata: [UInt8]
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.fullname = fullname
        self.rrtype = rrtype
        self.rrclass = rrclass
        self.rdata = rdata
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        fullname = try reader.readString(.fullname)
        (rrtype, rrclass, rdata) = try reader.readRecordFields()
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        try writer.writeString(fullname, .fullname)
        try writer.writeRecordFields(rrtype: rrtype, rrclass: rrclass, rdata: rdata)
    }
}
