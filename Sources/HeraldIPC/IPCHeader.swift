/// The 28-byte header in front of every request and reply (`ipc_msg_hdr`): six fields, all big-endian
/// except the opaque client context.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | version (1) |
/// | 4 | 4 | datalen: bytes of body after the header |
/// | 8 | 4 | ipc_flags |
/// | 12 | 4 | op |
/// | 16 | 8 | client context, echoed in replies |
/// | 24 | 4 | reg_index: a record's index on its connection |
public struct IPCHeader: Hashable, Sendable {
    /// Bytes in a header.
    public static let length = 28

    public var version: UInt32
    /// Bytes of body that follow the header.
    public var dataLength: UInt32
    public var flags: IPCFlags
    /// The raw operation code: a `RequestOperation` or a `ReplyOperation`.
    public var operation: UInt32
    public var context: ClientContext
    /// Which record of the connection a record operation concerns; 0 otherwise.
    public var registrationIndex: UInt32

    public init(
        version: UInt32 = IPCConstants.version, dataLength: UInt32, flags: IPCFlags = [], operation: UInt32,
        context: ClientContext = .zero, registrationIndex: UInt32 = 0
    ) {
        self.version = version
        self.dataLength = dataLength
        self.flags = flags
        self.operation = operation
        self.context = context
        self.registrationIndex = registrationIndex
    }

    /// The request operation, if `operation` names one.
    public var requestOperation: RequestOperation? { RequestOperation(rawValue: operation) }

    /// The reply operation, if `operation` names one.
    public var replyOperation: ReplyOperation? { ReplyOperation(rawValue: operation) }

    /// The 28 header bytes.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        write(to: &bytes)
        return bytes
    }

    /// Appends the 28 header bytes.
    public func write(to bytes: inout [UInt8]) {
        var writer = IPCBodyWriter()
        writer.writeUInt32(version)
        writer.writeUInt32(dataLength)
        writer.writeUInt32(flags.rawValue)
        writer.writeUInt32(operation)
        writer.writeRaw(context.bytes)
        writer.writeUInt32(registrationIndex)
        bytes.append(contentsOf: writer.bytes)
    }

    /// Writes `context` over the client context of an encoded header (at the start of `frame`): replies that
    /// differ only in it are encoded once.
    public static func writeContext(_ context: ClientContext, into frame: UnsafeMutableRawBufferPointer) {
        precondition(frame.count >= length, "an encoded frame starts with a whole header")
        var value = context.rawValue
        for offset in (16..<24).reversed() {
            frame[offset] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
    }

    /// Reads a header from the first 28 bytes, checking the version and that `datalen` is at most
    /// `maximumDataLength`. Bytes after the header are ignored.
    public static func decode(
        _ bytes: some Collection<UInt8>, maximumDataLength: Int = IPCConstants.maximumDataLength
    ) throws(IPCDecodeError) -> IPCHeader {
        guard bytes.count >= length else { throw .headerTruncated(length: bytes.count) }
        let raw = Array(bytes.prefix(length))
        func word(_ at: Int) -> UInt32 {
            UInt32(raw[at]) << 24 | UInt32(raw[at + 1]) << 16 | UInt32(raw[at + 2]) << 8 | UInt32(raw[at + 3])
        }
        let version = word(0)
        guard version == IPCConstants.version else { throw .unsupportedVersion(version) }
        let dataLength = word(4)
        guard UInt64(dataLength) <= UInt64(max(0, maximumDataLength)) else {
            throw .dataLengthTooLarge(declared: dataLength, maximum: maximumDataLength)
        }
        return IPCHeader(
            version: version, dataLength: dataLength, flags: IPCFlags(rawValue: word(8)), operation: word(12),
            context: ClientContext(rawValue: raw[16..<24].reduce(0) { $0 << 8 | UInt64($1) }),
            registrationIndex: word(24))
    }
}
