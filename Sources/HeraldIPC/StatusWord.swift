/// The 4-byte status a request receives (in band on a new connection, or on its error socket): the
/// `DNSServiceErrorType` as a big-endian `uint32`, with no header.
public enum StatusWord {
    /// Bytes in a status word.
    public static let length = 4

    /// The status word for `error`.
    public static func encode(_ error: DNSServiceError) -> [UInt8] {
        var writer = IPCBodyWriter()
        writer.writeError(error)
        return writer.bytes
    }

    /// Reads a status word from the first 4 bytes.
    public static func decode(_ bytes: [UInt8]) throws(IPCDecodeError) -> DNSServiceError {
        var reader = IPCBodyReader(bytes)
        return try reader.readError(.status)
    }
}
