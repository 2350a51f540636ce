/// Why bytes could not be read as a dnssd IPC header, request or reply. Offsets count from the start of
/// the body (or of the header, for header errors).
public enum IPCDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than the 28 bytes of a header.
    case headerTruncated(length: Int)
    /// A header whose version is not 1.
    case unsupportedVersion(UInt32)
    /// A header whose `datalen` exceeds the accepted maximum.
    case dataLengthTooLarge(declared: UInt32, maximum: Int)
    /// The body given does not have the length the header declares.
    case bodyLengthMismatch(declared: UInt32, actual: Int)
    /// An operation code that is not a request (when decoding a request) or not a reply (when decoding one).
    case unknownOperation(UInt32)
    /// A request operation Herald does not serve (port mapping).
    case unsupportedRequest(RequestOperation)
    /// A reply operation Herald does not decode (port mapping, framed get-property).
    case unsupportedReply(ReplyOperation)
    /// A reply of another kind than the one asked for.
    case operationMismatch(expected: UInt32, found: UInt32)
    /// An operation that only makes sense on a connection that already runs an operation, sent first.
    case requiresEstablishedConnection(RequestOperation)
    /// A fixed-size field runs past the end of the body.
    case truncated(field: IPCField, offset: Int, needed: Int, available: Int)
    /// A string field has no terminating NUL before the end of the body.
    case missingTerminator(field: IPCField, offset: Int)
    /// A string field is longer than the daemon accepts for it.
    case stringTooLong(field: IPCField, offset: Int, length: Int, maximum: Int)
    /// A string field is not valid UTF-8.
    case invalidUTF8(field: IPCField, offset: Int)
    /// A length-prefixed field (rdata, TXT, property value) declares more bytes than remain.
    case lengthPastEnd(field: IPCField, offset: Int, declared: Int, available: Int)
    /// A length-prefixed value is longer than the reader accepts.
    case valueTooLong(field: IPCField, offset: Int, length: Int, maximum: Int)
    /// The byte stream ended in the middle of a frame.
    case streamEndedMidFrame(bufferedBytes: Int)

    public var description: String {
        switch self {
        case .headerTruncated(let length):
            return "header truncated: \(length) bytes, fewer than the 28 of an IPC header"
        case .unsupportedVersion(let version):
            return "unsupported IPC version \(version); only version 1 is spoken"
        case .dataLengthTooLarge(let declared, let maximum):
            return "datalen \(declared) exceeds the maximum of \(maximum) bytes"
        case .bodyLengthMismatch(let declared, let actual):
            return "the header declares a \(declared)-byte body but \(actual) bytes were given"
        case .unknownOperation(let op):
            return "unknown operation \(op)"
        case .unsupportedRequest(let op):
            return "unsupported request: \(op) (\(op.rawValue))"
        case .unsupportedReply(let op):
            return "unsupported reply: \(op) (\(op.rawValue))"
        case .operationMismatch(let expected, let found):
            return "expected operation \(expected) but found \(found)"
        case .requiresEstablishedConnection(let op):
            return "\(op) request sent as the first request of a connection; it needs a running operation"
        case .truncated(let field, let offset, let needed, let available):
            return "\(field) at body offset \(offset) needs \(needed) bytes but only \(available) remain"
        case .missingTerminator(let field, let offset):
            return "\(field) at body offset \(offset) has no terminating NUL before the end of the body"
        case .stringTooLong(let field, let offset, let length, let maximum):
            return "\(field) at body offset \(offset) is \(length) bytes long, more than the \(maximum) allowed"
        case .invalidUTF8(let field, let offset):
            return "\(field) at body offset \(offset) is not valid UTF-8"
        case .lengthPastEnd(let field, let offset, let declared, let available):
            return "\(field) at body offset \(offset) declares \(declared) bytes but only \(available) remain"
        case .valueTooLong(let field, let offset, let length, let maximum):
            return "\(field) at body offset \(offset) declares \(length) bytes, more than the \(maximum) accepted"
        case .streamEndedMidFrame(let buffered):
            return "the stream ended in the middle of a frame (\(buffered) bytes buffered)"
        }
    }
}
