/// `DNSServiceAddRecord`: adds a record to a registered service. Flags, type, rdata with its `uint16`
/// length, TTL (0: the type's default); the header's `reg_index` names the new record.
public struct AddRecordRequest: IPCRequestMessage {
    public static let operation = RequestOperation.addRecord

    /// The header `reg_index`: the record's index on its connection.
    public var recordIndex: UInt32
    public var flags: DNSServiceFlags
    public var rrtype: UInt16
    public var rdata: [UInt8]
    public var ttl: UInt32

    public init(recordIndex: UInt32, flags: DNSServiceFlags = [], rrtype: UInt16, rdata: [UInt8], ttl: UInt32 = 0) {
        self.recordIndex = recordIndex
        self.flags = flags
        self.rrtype = rrtype
        self.rdata = rdata
        self.ttl = ttl
    }

    public var registrationIndex: UInt32 { recordIndex }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        recordIndex = header.registrationIndex
        flags = try reader.readFlags()
        rrtype = try reader.readUInt16(.rrtype)
        rdata = try reader.readLengthPrefixedData(length: .rdataLength, data: .rdata)
        ttl = try reader.readUInt32(.ttl)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt16(rrtype)
        try writer.writeLengthPrefixedData(rdata, .rdata)
        writer.writeUInt32(ttl)
    }
}
