/// The daemon's raw answer to a get-property request, written on the connection with no IPC header.
///
/// A known property is answered with three big-endian words run together — status 0, value length, value —
/// which for `DaemonVersion` is 12 bytes: `0`, `4`, the version. An unknown property is answered with the
/// 4-byte status `BadParam` alone. (The client reads the status first, then the length, then the value.)
public struct GetPropertyReply: Hashable, Sendable {
    public var status: DNSServiceError
    /// The value bytes; empty when `status` is an error.
    public var value: [UInt8]

    public init(status: DNSServiceError, value: [UInt8] = []) {
        self.status = status
        self.value = value
    }

    /// The answer carrying a daemon version number (dns_sd.h encodes version x.y.z as
    /// x·1,000,000 + y·1,000 + z above 1661, x·10,000 + y·100 + z up to it).
    public static func daemonVersion(_ version: UInt32) -> GetPropertyReply {
        var writer = IPCBodyWriter()
        writer.writeUInt32(version)
        return GetPropertyReply(status: .noError, value: writer.bytes)
    }

    /// The answer to an unrecognised property name.
    public static let unknownProperty = GetPropertyReply(status: .badParam)

    /// The value read as a big-endian `uint32`, when it is 4 bytes long (the `DaemonVersion` value).
    public var uint32Value: UInt32? {
        guard status == .noError, value.count == 4 else { return nil }
        return value.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The raw bytes: the status word alone for an error, else status, length and value.
    public var encoded: [UInt8] {
        var writer = IPCBodyWriter()
        writer.writeError(status)
        if status == .noError {
            writer.writeUInt32(UInt32(value.count))
            writer.writeRaw(value)
        }
        return writer.bytes
    }

    /// How many bytes the whole answer takes, once `prefix` (the bytes received so far) says; nil until then.
    public static func totalLength(ofPrefix prefix: [UInt8]) -> Int? {
        guard prefix.count >= 4 else { return nil }
        let status = prefix[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if status != 0 { return 4 }
        guard prefix.count >= 8 else { return nil }
        let length = prefix[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return 8 + Int(length)
    }

    /// Reads a complete answer. The value length must fit in `maximumValueLength` and in the bytes given.
    public static func decode(
        _ bytes: [UInt8], maximumValueLength: Int = 256
    ) throws(IPCDecodeError) -> GetPropertyReply {
        var reader = IPCBodyReader(bytes)
        let status = try reader.readError(.status)
        guard status == .noError else { return GetPropertyReply(status: status) }
        let lengthOffset = reader.offset
        let length = try reader.readUInt32(.propertyLength)
        guard length <= UInt32(maximumValueLength) else {
            throw .valueTooLong(
                field: .propertyValue, offset: lengthOffset, length: Int(length), maximum: maximumValueLength)
        }
        return GetPropertyReply(status: status, value: try reader.readBytes(Int(length), .propertyValue))
    }
}
