/// `DNSServiceUpdateRecord`: new rdata (with its `uint16` length) and TTL for the record the header's
/// `reg_index` names, or for a registered service's own TXT record when it is `primaryTXTRecordIndex`.
public struct UpdateRecordRequest: IPCRequestMessage {
    public static let operation = RequestOperation.updateRecord

    /// The `reg_index` that means "the service's primary TXT record" (`TXT_RECORD_INDEX`, all ones).
    public static let primaryTXTRecordIndex: UInt32 = 0xFFFF_FFFF

    /// The header `reg_index`.
    public var recordIndex: UInt32
    public var flags: DNSServiceFlags
    public var rdata: [UInt8]
    public var ttl: UInt32

    public init(
        recordIndex: UInt32 = UpdateRecordRequest.primaryTXTRecordIndex, flags: DNSServiceFlags = [],
        rdata: [UInt8], ttl: UInt32 = 0
    ) {
        self.recordIndex = recordIndex
        self.flags = flags
        self.rdata = rdata
        self.ttl = ttl
    }

    public var registrationIndex: UInt32 { recordIndex }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        recordIndex = header.registrationIndex
        flags = try reader.readFlags()
        rdata = try reader.readLengthPrefixedData(length: .rdataLength, data: .rdata)
        ttl = try reader.readUInt32(.ttl)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        try writer.writeLengthPrefixedData(rdata, .rdata)
        writer.writeUInt32(ttl)
    }
}
