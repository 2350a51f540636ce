/// Why a message could not be encoded: a value the wire format cannot carry.
public enum IPCEncodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A string holds a NUL byte, which would end it early on the wire.
    case embeddedNUL(field: IPCField)
    /// A string is longer than the receiving side accepts.
    case stringTooLong(field: IPCField, length: Int, maximum: Int)
    /// Data with a 16-bit length is longer than 65,535 bytes.
    case dataTooLong(field: IPCField, length: Int)
    /// The whole body would exceed the maximum `datalen`.
    case messageTooLarge(length: Int, maximum: Int)
    /// An operation that needs a running operation on the connection, encoded as a first request.
    case requiresEstablishedConnection(RequestOperation)

    public var description: String {
        switch self {
        case .embeddedNUL(let field):
            return "\(field) contains a NUL byte"
        case .stringTooLong(let field, let length, let maximum):
            return "\(field) is \(length) bytes long, more than the \(maximum) allowed"
        case .dataTooLong(let field, let length):
            return "\(field) is \(length) bytes long, more than the 65535 a 16-bit length can say"
        case .messageTooLarge(let length, let maximum):
            return "the message body would be \(length) bytes, more than the \(maximum) allowed"
        case .requiresEstablishedConnection(let op):
            return "\(op) can only be sent on a connection that already runs an operation"
        }
    }
}
