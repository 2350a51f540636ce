/// Reads the field primitives of an IPC body in order, never past its end: big-endian `uint32` and `uint16`,
/// raw network-order ports, NUL-terminated strings and 16-bit-length-prefixed data.
public struct IPCBodyReader: Sendable {
    private let bytes: [UInt8]
    /// Offset of the next unread byte, from the start of the body.
    public private(set) var offset: Int

    public init(_ body: [UInt8]) {
        self.bytes = body
        self.offset = 0
    }

    public init(_ body: ArraySlice<UInt8>) {
        self.init(Array(body))
    }

    /// Bytes not read yet.
    public var remainingCount: Int { bytes.count - offset }

    public var isAtEnd: Bool { offset >= bytes.count }

    /// A big-endian `uint32`.
    public mutating func readUInt32(_ field: IPCField) throws(IPCDecodeError) -> UInt32 {
        try need(4, field)
        let value =
            UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
        offset += 4
        return value
    }

    /// A big-endian `uint16`.
    public mutating func readUInt16(_ field: IPCField) throws(IPCDecodeError) -> UInt16 {
        try need(2, field)
        let value = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        offset += 2
        return value
    }

    /// A port: the two bytes exactly as the client library copies them from its network-order argument,
    /// returned as the port number in host order.
    public mutating func readPort(_ field: IPCField = .port) throws(IPCDecodeError) -> UInt16 {
        try readUInt16(field)
    }

    /// A flags word.
    public mutating func readFlags() throws(IPCDecodeError) -> DNSServiceFlags {
        DNSServiceFlags(rawValue: try readUInt32(.flags))
    }

    /// An error code word.
    public mutating func readError(_ field: IPCField = .error) throws(IPCDecodeError) -> DNSServiceError {
        DNSServiceError(wireValue: try readUInt32(field))
    }

    /// A NUL-terminated UTF-8 string of at most `maximumLength` bytes (not counting the NUL). The NUL must
    /// come before the end of the body.
    public mutating func readString(
        _ field: IPCField, maximumLength: Int = IPCConstants.maximumDomainNameStringLength
    ) throws(IPCDecodeError) -> String {
        let start = offset
        guard let end = bytes[start...].firstIndex(of: 0) else {
            throw .missingTerminator(field: field, offset: start)
        }
        let length = end - start
        guard length <= maximumLength else {
            throw .stringTooLong(field: field, offset: start, length: length, maximum: maximumLength)
        }
        guard let string = String(validating: bytes[start..<end], as: UTF8.self) else {
            throw .invalidUTF8(field: field, offset: start)
        }
        offset = end + 1
        return string
    }

    /// Exactly `count` bytes.
    public mutating func readBytes(_ count: Int, _ field: IPCField) throws(IPCDecodeError) -> [UInt8] {
        guard count >= 0, count <= remainingCount else {
            throw .lengthPastEnd(field: field, offset: offset, declared: count, available: remainingCount)
        }
        let value = Array(bytes[offset..<offset + count])
        offset += count
        return value
    }

    /// A `uint16` length followed by that many bytes (rdata, TXT record).
    public mutating func readLengthPrefixedData(
        length lengthField: IPCField, data dataField: IPCField
    ) throws(IPCDecodeError) -> [UInt8] {
        let length = try readUInt16(lengthField)
        return try readBytes(Int(length), dataField)
    }

    /// Everything not read yet, leaving the reader at the end.
    public mutating func readRemaining() -> [UInt8] {
        let rest = Array(bytes[offset...])
        offset = bytes.count
        return rest
    }

    private func need(_ count: Int, _ field: IPCField) throws(IPCDecodeError) {
        guard remainingCount >= count else {
            throw .truncated(field: field, offset: offset, needed: count, available: remainingCount)
        }
    }
}
