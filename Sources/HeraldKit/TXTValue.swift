/// The value of one TXT attribute (RFC 6763 §6.4): present without `=` (a boolean attribute that is simply
/// there), or a value of any bytes, possibly empty (`key=`).
public enum TXTValue: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// `key` alone: the attribute is present and has no value ("true").
    case flag
    /// `key=value`: the value's bytes, which need not be UTF-8 (RFC 6763 §6.5).
    case data([UInt8])

    /// A text value, stored as its UTF-8 bytes.
    public init(_ text: String) { self = .data(Array(text.utf8)) }

    public init(stringLiteral value: String) { self.init(value) }

    /// The value as text when it is valid UTF-8; nil for `flag` and for binary values.
    public var string: String? {
        guard case .data(let bytes) = self else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value's bytes; nil for `flag`.
    public var bytes: [UInt8]? {
        guard case .data(let bytes) = self else { return nil }
        return bytes
    }

    public var description: String {
        switch self {
        case .flag: return "(flag)"
        case .data(let bytes):
            if let text = String(validating: bytes, as: UTF8.self),
                !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                return text
            }
            return bytes.map { byte in
                let hex = String(byte, radix: 16)
                return "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }.joined()
        }
    }
}
