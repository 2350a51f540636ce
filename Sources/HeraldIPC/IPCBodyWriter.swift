/// Appends the field primitives of an IPC body: the counterpart of `IPCBodyReader`.
public struct IPCBodyWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init() {
        self.bytes = []
    }

    /// A big-endian `uint32`.
    public mutating func writeUInt32(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// A big-endian `uint16`.
    public mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// A port given in host order, written as the two network-order bytes the client library copies.
    public mutating func writePort(_ port: UInt16) {
        writeUInt16(port)
    }

    public mutating func writeFlags(_ flags: DNSServiceFlags) {
        writeUInt32(flags.rawValue)
    }

    public mutating func writeError(_ error: DNSServiceError) {
        writeUInt32(error.wireValue)
    }

    /// A string and its terminating NUL. Refuses strings holding a NUL or longer than `maximumLength` bytes.
    public mutating func writeString(
        _ string: String, _ field: IPCField, maximumLength: Int = IPCConstants.maximumDomainNameStringLength
    ) throws(IPCEncodeError) {
        let utf8 = string.utf8
        guard !utf8.contains(0) else { throw .embeddedNUL(field: field) }
        guard utf8.count <= maximumLength else {
            throw .stringTooLong(field: field, length: utf8.count, maximum: maximumLength)
        }
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    /// Bytes as they are.
    public mutating func writeRaw(_ data: some Sequence<UInt8>) {
        bytes.append(contentsOf: data)
    }

    /// A `uint16` length and the data. Refuses data longer than 65,535 bytes.
    public mutating func writeLengthPrefixedData(_ data: [UInt8], _ field: IPCField) throws(IPCEncodeError) {
        guard data.count <= Int(UInt16.max) else { throw .dataTooLong(field: field, length: data.count) }
        writeUInt16(UInt16(data.count))
        bytes.append(contentsOf: data)
    }
}
