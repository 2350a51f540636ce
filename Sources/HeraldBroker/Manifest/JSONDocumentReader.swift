/// A strict JSON reader (RFC 8259) for manifest files.
///
/// Unlike Foundation's `JSONSerialization` it keeps duplicate keys (so the validator can report them), tells
/// booleans from numbers, keeps the line of every key, and reports the line and column of a syntax error.
/// A UTF-8 byte order mark is skipped; anything that is not UTF-8 is refused.
package struct JSONDocumentReader {
    /// Nesting deeper than this is refused; a manifest needs three levels.
    package static let maxDepth = 32

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    /// Reads one JSON value filling the whole input (whitespace aside).
    package static func read(_ bytes: [UInt8]) throws(ManifestSyntaxError) -> ManifestDocument {
        var reader = JSONDocumentReader(bytes: bytes)
        return try reader.readDocument()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func readDocument() throws(ManifestSyntaxError) -> ManifestDocument {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        guard String(validating: bytes[index...], as: UTF8.self) != nil else {
            throw ManifestSyntaxError(message: "the file is not valid UTF-8 text")
        }
        skipWhitespace()
        let value = try readValue(depth: 0)
        skipWhitespace()
        if index < bytes.count { throw error("unexpected text after the end of the JSON value") }
        return value
    }

    // MARK: - Values

    private mutating func readValue(depth: Int) throws(ManifestSyntaxError) -> ManifestDocument {
        guard let byte = peek() else { throw error("the file ends where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
        case UInt8(ascii: "["): return try readArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try readNumber())
        default: throw error("unexpected character \(describe(byte)) where a value was expected")
        }
    }

    private mutating func readObject(depth: Int) throws(ManifestSyntaxError) -> ManifestDocument {
        if depth > Self.maxDepth { throw error("values are nested more than \(Self.maxDepth) levels deep") }
        index += 1  // {
        var entries: [ManifestDocument.Entry] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(entries)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                if peek() == UInt8(ascii: "}") { throw error("a comma is followed by '}': remove the trailing comma") }
                throw error("expected a key in double quotes")
            }
            let keyLine = line
            let key = try readString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after the key \"\(key)\"") }
            index += 1
            skipWhitespace()
            let value = try readValue(depth: depth)
            entries.append(.init(key: key, value: value, line: keyLine))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(entries)
            case nil: throw error("the file ends inside an object: a '}' is missing")
            default: throw error("expected ',' or '}' after the value of \"\(key)\"")
            }
        }
    }

    private mutating func readArray(depth: Int) throws(ManifestSyntaxError) -> ManifestDocument {
        if depth > Self.maxDepth { throw error("values are nested more than \(Self.maxDepth) levels deep") }
        index += 1  // [
        var items: [ManifestDocument] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: "]") { throw error("a comma is followed by ']': remove the trailing comma") }
            items.append(try readValue(depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            case nil: throw error("the file ends inside an array: a ']' is missing")
            default: throw error("expected ',' or ']' between array items")
            }
        }
    }

    private mutating func readString() throws(ManifestSyntaxError) -> String {
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var run = index  // start of the current run of plain bytes
        func flush(_ reader: JSONDocumentReader, to end: Int, into scalars: inout String.UnicodeScalarView) {
            if end > run {
                scalars.append(contentsOf: String(decoding: reader.bytes[run..<end], as: UTF8.self).unicodeScalars)
            }
        }
        while true {
            guard let byte = peek() else { throw error("the file ends inside a string: a closing '\"' is missing") }
            switch byte {
            case UInt8(ascii: "\""):
                flush(self, to: index, into: &scalars)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(self, to: index, into: &scalars)
                index += 1
                scalars.append(try readEscape())
                run = index
            case 0..<0x20:
                throw error(
                    "a control character (\(describe(byte))) inside a string must be escaped, "
                        + "as \\n or \\u00XX")
            default:
                index += 1
            }
        }
    }

    private mutating func readEscape() throws(ManifestSyntaxError) -> Unicode.Scalar {
        guard let byte = peek() else { throw error("the file ends inside an escape sequence") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try readHex4()
            if (0xD800...0xDBFF).contains(first) {
                guard peek() == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") else {
                    throw error("\\u\(hex(first)) is half of a surrogate pair with no second half")
                }
                index += 2
                let second = try readHex4()
                guard (0xDC00...0xDFFF).contains(second) else {
                    throw error("\\u\(hex(first)) must be followed by a low surrogate, not \\u\(hex(second))")
                }
                let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                return Unicode.Scalar(value)!  // in 0x10000...0x10FFFF by construction
            }
            guard let scalar = Unicode.Scalar(first) else {
                throw error("\\u\(hex(first)) is a lone low surrogate, not a character")
            }
            return scalar
        default:
            throw error("\\\(describe(byte, quoted: false)) is not a JSON escape; use \\\\ for a backslash")
        }
    }

    private mutating func readHex4() throws(ManifestSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = Self.hexValue(byte) else {
                throw error("\\u must be followed by four hexadecimal digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func readNumber() throws(ManifestSyntaxError) -> String {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), Self.isDigit(first) else { throw error("a '-' must be followed by digits") }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek(), Self.isDigit(next) {
            throw error("numbers must not have leading zeros")
        }
        skipDigits()
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let next = peek(), Self.isDigit(next) else {
                throw error("a '.' in a number must be followed by digits")
            }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let next = peek(), Self.isDigit(next) else { throw error("an exponent must have digits") }
            skipDigits()
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    // MARK: - Helpers

    private mutating func expectWord(_ word: String) throws(ManifestSyntaxError) {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected),
            index + expected.count == bytes.count || !Self.isWordByte(bytes[index + expected.count])
        else {
            throw error(
                "unexpected word: expected a value (a string in double quotes, a number, an array, an object, "
                    + "true, false or null)")
        }
        index += expected.count
    }

    private mutating func skipDigits() {
        while let byte = peek(), Self.isDigit(byte) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    private func error(_ message: String) -> ManifestSyntaxError {
        ManifestSyntaxError(line: line, column: index - lineStart + 1, message: "JSON: " + message)
    }

    private func describe(_ byte: UInt8, quoted: Bool = true) -> String {
        if byte >= 0x20 && byte < 0x7F {
            let text = String(UnicodeScalar(byte))
            return quoted ? "'\(text)'" : text
        }
        return "byte 0x" + hex(UInt32(byte))
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, (value > 0xFF ? 4 : 2) - digits.count)) + digits
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
