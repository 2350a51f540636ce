/// The record fields several messages share, in this order: type, class, and rdata with its `uint16` length
/// (query and address replies, register-record and reconfirm requests).
extension IPCBodyReader {
    public mutating func readRecordFields() throws(IPCDecodeError) -> (rrtype: UInt16, rrclass: UInt16, rdata: [UInt8])
    {
        let rrtype = try readUInt16(.rrtype)
        let rrclass = try readUInt16(.rrclass)
        let rdata = try readLengthPrefixedData(length: .rdataLength, data: .rdata)
        return (rrtype, rrclass, rdata)
    }
}

extension IPCBodyWriter {
    public mutating func writeRecordFields(rrtype: UInt16, rrclass: UInt16, rdata: [UInt8]) throws(IPCEncodeError) {
        writeUInt16(rrtype)
        writeUInt16(rrclass)
        try writeLengthPrefixedData(rdata, .rdata)
    }
}
