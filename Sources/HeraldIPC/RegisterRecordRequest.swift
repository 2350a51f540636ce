/// `DNSServiceRegisterRecord` on a shared connection: flags (`shared`, `unique` or `knownUnique`), interface
/// index, full name, type, class, rdata with its `uint16` length, TTL. The header's `reg_index` names the
/// record for later updates and removal; its client context routes the `RegisterRecordReply`.
public struct RegisterRecordRequest: IPCRequestMessage {
    public static let operation = RequestOperation.registerRecord

    /// The header `reg_index`: the record's index on its connection.
    public var recordIndex: UInt32
    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var fullname: String
    public var rrtype: UInt16
    public var rrclass: UInt16
    public var rdata: [UInt8]
    public var ttl: UInt32

    public init(
        recordIndex: UInt32, flags: DNSServiceFlags, interfaceIndex: UInt32 = 0, fullname: String, rrtype: UInt16,
        rrclass: UInt16 = 1, rdata: [UInt8], ttl: UInt32
    ) {
        self.recordIndex = recordIndex
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.fullname = fullname
        self.rrtype = rrtype
        self.rrclass = rrclass
        self.rdata = rdata
        self.ttl = ttl
    }

    public var registrationIndex: UInt32 { recordIndex }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        recordIndex = header.registrationIndex
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        fullname = try reader.readString(.fullname)
        (rrtype, rrclass, rdata) = try reader.readRecordFields()
        ttl = try reader.readUInt32(.ttl)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        try writer.writeString(fullname, .fullname)
        try writer.writeRecordFields(rrtype: rrtype, rrclass: rrclass, rdata: rdata)
        writer.writeUInt32(ttl)
    }
}
