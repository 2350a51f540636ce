/// `DNSServiceRemoveRecord`: flags only; the header's `reg_index` names the record.
public struct RemoveRecordRequest: IPCRequestMessage {
    public static let operation = RequestOperation.removeRecord

    /// The header `reg_index`.
    public var recordIndex: UInt32
    public var flags: DNSServiceFlags

    public init(recordIndex: UInt32, flags: DNSServiceFlags = []) {
        self.recordIndex = recordIndex
        self.flags = flags
    }

    public var registrationIndex: UInt32 { recordIndex }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        recordIndex = header.registrationIndex
        flags = try reader.readFlags()
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
    }
}
