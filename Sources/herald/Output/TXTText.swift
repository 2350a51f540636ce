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

    /// For people: `key=value` strings separated by spaces, each escaped so that it can be pasted back
    /// into `herald register` from a shell: spaces and shell metacharacters get a backslash, a backslash
    /// is doubled, and control characters and bytes that are not UTF-8 are written `\xHH`. Empty
    /// strings (the empty TXT record is one) are left out; nothing at all gives `(none)`.
    static func human(_ rdata: [UInt8]) -> String {
        let shown = strings(rdata).filter { !$0.isEmpty }.map(escaped)
        return shown.isEmpty ? "(none)" : shown.joined(separator: " ")
    }

    /// For JSON: each string as text, with bytes that are not UTF-8 (and control characters) as `\xHH`.
    static func jsonStrings(_ rdata: [UInt8]) -> [String] {
        strings(rdata).map { string in
            if let text = String(validating: string, as: UTF8.self), !text.unicodeScalars.contains(where: isControl) {
                return text
            }
            return escapedBytes(string, shellMetacharacters: false)
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

    private static let shellMetacharacters = Set(" &;`'\"|*?~<>^()[]{}$#!".utf8)

    private static func escaped(_ string: ArraySlice<UInt8>) -> String {
        escapedBytes(string, shellMetacharacters: true)
    }

    /// Escapes byte by byte, keeping valid multi-byte UTF-8 sequences as they are.
    private static func escapedBytes(_ string: ArraySlice<UInt8>, shellMetacharacters escapeShell: Bool) -> String {
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
                if escapeShell && shellMetacharacters.contains(byte) { out += "\\" }
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
              text.unicodeScalars.count == 1, !isControl(scalar) else { return nil }
        return (scalar, length)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
