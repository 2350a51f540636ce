/// TXT record data as text: shell-friendly for people, exact for scripts.
enum TXTText {
    /// The character-strings of TXT rdata (a malformed tail is returned as one last string).
    static func strings(_ rdata: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var index = 0
        while index < rdata.count {
            let end = min(rdata.count, index + 1 + Int(rdata[index]))
            result.append(rdata[(index + 1)..<end])
            index = end
        }
        return result
    }

    /// For people: `key=value` strings separated by spaces, each written so that it can be pasted back
    /// into `herald register` from a shell: a backslash is doubled and control characters and bytes that are
    /// not UTF-8 are written `\xHH` (the escapes `herald register` reads), and a string holding a space, a
    /// backslash or a shell metacharacter is put in single quotes (`'title=Front page'`), inside which the shell
    /// changes nothing. Empty strings (the empty TXT record is one) are left out; nothing at all gives `(none)`.
    static func human(_ rdata: [UInt8]) -> String {
        let shown = strings(rdata).filter { !$0.isEmpty }.map { shellQuoted(escapedBytes($0)) }
        return shown.isEmpty ? "(none)" : shown.joined(separator: " ")
    }

    /// `text` as one shell word: as it is when the shell would keep it so, else in single quotes (a single
    /// quote inside becomes `'\''`).
    static func shellQuoted(_ text: String) -> String {
        guard text.utf8.contains(where: { shellMetacharacters.contains($0) || $0 == UInt8(ascii: "\\") }) else {
            return text
        }
        return "'" + text.replacing("'", with: "'\\''") + "'"
    }

    /// For JSON: each string as text, with bytes that are not UTF-8 (and control characters) as `\xHH`.
    static func jsonStrings(_ rdata: [UInt8]) -> [String] {
        strings(rdata).map { string in
            if let text = String(validating: string, as: UTF8.self), !text.unicodeScalars.contains(where: isControl) {
                return text
            }
            return escapedBytes(string)
        }
    }

    /// Lower-case hex of bytes.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let shellMetacharacters = Set(" \t&;`'\"|*?~<>^()[]{}$#!".utf8)

    /// Escapes byte by byte, keeping valid multi-byte UTF-8 sequences as they are.
    private static func escapedBytes(_ string: ArraySlice<UInt8>) -> String {
        var out = ""
        var index = string.startIndex
        while index < string.endIndex {
            let byte = string[index]
            if byte >= 0x80, let (scalar, length) = decodeScalar(string[index...]) {
                out.unicodeScalars.append(scalar)
                index += length
                continue
            }
            if byte == UInt8(ascii: "\\") {
                out += "\\\\"
            } else if byte < 0x20 || byte == 0x7F || byte >= 0x80 {
                out += "\\x" + hex([byte])
            } else {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
            index += 1
        }
        return out
    }

    /// One UTF-8 encoded scalar at the start of `bytes`, and its length, when it is valid and printable.
    private static func decodeScalar(_ bytes: ArraySlice<UInt8>) -> (Unicode.Scalar, Int)? {
        let first = bytes[bytes.startIndex]
        let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 0
        guard length > 0, bytes.count >= length else { return nil }
        let slice = bytes[bytes.startIndex..<(bytes.startIndex + length)]
        guard let text = String(validating: slice, as: UTF8.self), let scalar = text.unicodeScalars.first,
            text.unicodeScalars.count == 1, !isControl(scalar)
        else { return nil }
        return (scalar, length)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
