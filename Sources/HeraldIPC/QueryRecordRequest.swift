/// `DNSServiceQueryRecord`: flags, interface index, full name, record type, record class.
public struct QueryRecordRequest: IPCRequestMessage {
    public static let operation = RequestOperation.query

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var name: String
    public var rrtype: UInt16
    public var rrclass: UInt16

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, name: String, rrtype: UInt16, rrclass: UInt16 = 1
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.name = name
        self.rrtype = rrtype
        self.rrclass = rrclass
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        name = try reader.readString(.name)
        rrtype = try reader.readUInt16(.rrtype)
        rrclass = try reader.readUInt16(.rrclass)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        try writer.writeString(name, .name)
        writer.writeUInt16(rrtype)
        writer.writeUInt16(rrclass)
    }
}
