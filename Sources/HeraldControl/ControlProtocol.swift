#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The operators' control protocol (version 1): newline-delimited JSON over a Unix stream socket.
///
/// A client sends one ``ControlRequest`` per line; the daemon answers each with one ``ControlReply`` line that
/// carries the request's `id`. After a `subscribe` request the daemon also sends event lines (``ControlReply``
/// with `event` set and no `id`) whenever a pending request appears, a decision changes, or the audit log grows.
/// Every line carries the protocol version; a daemon answers a request of another version with the error
/// `unsupported-version`, naming the version it speaks.
public enum ControlProtocol {
    /// The version this build speaks.
    public static let version = 1
    /// The longest line either side accepts (a manifest travels inside `app-add`).
    public static let maxLineLength = 512 * 1024
    /// The most a reply or event carrying a list (`log`, `requests`, `app-list`) holds, in bytes of JSON by
    /// ``encodedLengthBound(_:)``: half the line limit. A longer list is cut there (at least one item is always
    /// sent), the reply says `"more": true`, and the client asks for the rest (`after` for the log, `offset` for
    /// the lists); events follow one another. So no line comes near the limit, whatever the items hold.
    public static let pageLength = maxLineLength / 2

    /// An upper bound of the length in JSON of an item made of `strings` and a few dates and numbers: each string
    /// as JSONEncoder writes it (a control character as `\u00XX`, a quote or backslash with a backslash), plus room
    /// for keys, dates and numbers.
    public static func encodedLengthBound(_ strings: [String?]) -> Int {
        var length = 512
        for string in strings {
            guard let string else { continue }
            length += 8
            for byte in string.utf8 {
                switch byte {
                case 0..<0x20: length += 6
                case UInt8(ascii: "\\"), UInt8(ascii: "\""): length += 2
                default: length += 1
                }
            }
        }
        return length
    }

    /// Encodes a value as one line of JSON, newline included.
    public static func line<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return Array(try encoder.encode(value)) + [UInt8(ascii: "\n")]
    }

    /// Decodes one line (without its newline).
    public static func decode<Value: Decodable>(_ type: Value.Type, from line: some Collection<UInt8>) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(line))
    }
}

/// Splits a byte stream into lines, refusing lines longer than ``ControlProtocol/maxLineLength``.
public struct ControlLineBuffer: Sendable {
    private var buffer: [UInt8] = []
    /// True when no part of a line is waiting for its end.
    public var isEmpty: Bool { buffer.isEmpty }
    public let maxLineLength: Int

    public init(maxLineLength: Int = ControlProtocol.maxLineLength) {
        self.maxLineLength = maxLineLength
    }

    /// A line was longer than the limit.
    public struct LineTooLong: Error, CustomStringConvertible {
        public let limit: Int
        public var description: String { "a line is longer than \(limit) bytes" }
    }

    /// Adds bytes and returns the complete lines they finish (empty lines are skipped).
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(LineTooLong) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var lines: [[UInt8]] = []
        var start = 0
        while let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
            // A complete line is held to the limit too, whether it came in one read or in many.
            if end - start > maxLineLength { throw LineTooLong(limit: maxLineLength) }
            if end > start { lines.append(Array(buffer[start..<end])) }
            start = end + 1
        }
        buffer.removeFirst(start)
        if buffer.count > maxLineLength { throw LineTooLong(limit: maxLineLength) }
        return lines
    }
}
