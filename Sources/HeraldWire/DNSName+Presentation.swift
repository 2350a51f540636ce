/// The presentation (text) form of names: labels joined by dots, with `\.`, `\\` and `\DDD` escapes
/// (RFC 1035 §5.1, RFC 6763 §4.3).
extension DNSName: CustomStringConvertible, ExpressibleByStringLiteral {
    /// Parses a name in presentation form. A trailing dot is optional; `""` and `"."` are the root.
    public init(_ text: String) throws(DNSNameError) {
        var labels: [[UInt8]] = []
        var current: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        if bytes == [UInt8(ascii: ".")] {
            self = .root
            return
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "."):
                if current.isEmpty { throw .emptyLabel }
                labels.append(current)
                current = []
                index += 1
            case UInt8(ascii: "\\"):
                guard index + 1 < bytes.count else { throw .invalidEscape("\\") }
                let next = bytes[index + 1]
                if Self.isDigit(next) {
                    guard index + 3 < bytes.count,
                        Self.isDigit(bytes[index + 2]), Self.isDigit(bytes[index + 3])
                    else {
                        let end = min(bytes.count, index + 4)
                        throw .invalidEscape(String(decoding: bytes[index..<end], as: UTF8.self))
                    }
                    let value =
                        Int(bytes[index + 1] - 48) * 100 + Int(bytes[index + 2] - 48) * 10
                        + Int(bytes[index + 3] - 48)
                    guard value <= 255 else {
                        throw .invalidEscape(String(decoding: bytes[index..<(index + 4)], as: UTF8.self))
                    }
                    current.append(UInt8(value))
                    index += 4
                } else {
                    current.append(next)
                    index += 2
                }
            default:
                current.append(byte)
                index += 1
            }
        }
        if !current.isEmpty { labels.append(current) }
        try self.init(labels: labels)
    }

    /// Parses a literal name; traps on an invalid literal, so use it only for constants.
    public init(stringLiteral value: String) {
        do {
            try self.init(value)
        } catch {
            preconditionFailure("invalid DNS name literal '\(value)': \(error)")
        }
    }

    /// The name in presentation form, with a trailing dot (`.` for the root).
    public var description: String { text(escapingSpaces: false) }

    /// The name as the DNS-SD C API hands full names to programs (resolve and record callbacks,
    /// `DNSServiceConstructFullName`): the presentation form with spaces escaped too, as `\032`, so that a program
    /// can compare it with a name it built, or split it at its unescaped dots.
    public var dnssdFullName: String { text(escapingSpaces: true) }

    /// A full name in the C API's form (``dnssdFullName``) as people read it: with plain spaces (dots and
    /// backslashes inside a label stay escaped, so it still reads unambiguously). Text that is no name comes back
    /// unchanged.
    public static func readable(dnssdFullName text: String) -> String {
        (try? DNSName(text))?.description ?? text
    }

    private func text(escapingSpaces: Bool) -> String {
        if wire.isEmpty { return "." }
        var text = ""
        for label in labels {
            text += Self.presentation(ofLabel: label, escapingSpaces: escapingSpaces)
            text += "."
        }
        return text
    }

    /// One label in presentation form: dots and backslashes escaped, control bytes and bytes that are
    /// not part of valid UTF-8 written as `\DDD`, everything else (UTF-8 included) as is; spaces too, unless
    /// `escapingSpaces`.
    public static func presentation<Label: Collection>(ofLabel label: Label, escapingSpaces: Bool = false) -> String
    where Label.Element == UInt8 {
        let bytes = Array(label)
        let validUTF8 = String(validating: bytes, as: UTF8.self) != nil
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20, 0x7F:
                out.append(contentsOf: escaped(byte))
            case UInt8(ascii: " ") where escapingSpaces:
                out.append(contentsOf: escaped(byte))
            case 0x80...0xFF where !validUTF8:
                out.append(contentsOf: escaped(byte))
            default:
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func escaped(_ byte: UInt8) -> [UInt8] {
        [UInt8(ascii: "\\"), 48 + byte / 100, 48 + (byte / 10) % 10, 48 + byte % 10]
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }
}
