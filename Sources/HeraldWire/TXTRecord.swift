/// The data of a TXT record: a sequence of character-strings, read as DNS-SD key/value pairs
/// (RFC 6763 §6).
///
/// The record keeps its exact wire bytes, so whatever a peer sent survives a round trip unchanged; the
/// key/value view is computed from them.
public struct TXTRecord: Hashable, Sendable, CustomStringConvertible {
    /// The rdata bytes: each string preceded by its length byte.
    public private(set) var rdata: [UInt8]

    /// The empty TXT record of RFC 6763 §6.1: a single zero-length string (one zero byte).
    public static let empty = TXTRecord(uncheckedRData: [0])

    init(uncheckedRData: [UInt8]) { self.rdata = uncheckedRData }

    /// Hashes the bytes in one go (an array of bytes hashes them one call per byte).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rdata.count)
        rdata.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (lhs: TXTRecord, rhs: TXTRecord) -> Bool { WordwiseBytes.equal(lhs.rdata, rhs.rdata) }

    /// Wraps rdata, checking that its strings exactly fill it.
    public init(rdata: [UInt8]) throws(TXTRecordError) {
        var index = 0
        while index < rdata.count {
            let end = index + 1 + Int(rdata[index])
            if end > rdata.count { throw .stringOverrun(offset: index) }
            index = end
        }
        self.rdata = rdata
    }

    /// Builds a record from raw character-strings; no strings gives the empty record (one zero byte).
    public init(strings: [[UInt8]]) throws(TXTRecordError) {
        if strings.isEmpty {
            self = .empty
            return
        }
        var data: [UInt8] = []
        for string in strings {
            guard string.count <= 255 else { throw .stringTooLong(length: string.count) }
            data.append(UInt8(string.count))
            data.append(contentsOf: string)
        }
        self.rdata = data
    }

    /// Builds a record from key/value pairs in order (RFC 6763 §6.3–6.5). A nil value makes a boolean
    /// key (`key`); an empty value makes `key=`.
    public init(_ pairs: KeyValuePairs<String, [UInt8]?>) throws(TXTRecordError) {
        try self.init(entries: pairs.map { TXTEntry(key: $0.key, value: $0.value) })
    }

    /// Builds a record from entries in order, validating keys (printable ASCII except `=`, not empty)
    /// and refusing a key given twice.
    public init(entries: [TXTEntry]) throws(TXTRecordError) {
        var seen = Set<String>()
        var strings: [[UInt8]] = []
        for entry in entries {
            try TXTRecord.validate(key: entry.key)
            guard seen.insert(entry.key.lowercased()).inserted else { throw .duplicateKey(entry.key) }
            var string = Array(entry.key.utf8)
            if let value = entry.value {
                string.append(UInt8(ascii: "="))
                string.append(contentsOf: value)
            }
            strings.append(string)
        }
        try self.init(strings: strings)
    }

    /// Checks a key against RFC 6763 §6.4: at least one character, printable US-ASCII (0x20–0x7E), no `=`.
    public static func validate(key: String) throws(TXTRecordError) {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty else { throw .emptyKey }
        for byte in bytes where byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "=") {
            throw .invalidKey(key)
        }
    }

    /// The character-strings in order, as slices of `rdata`.
    public var strings: [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var index = 0
        while index < rdata.count {
            let end = index + 1 + Int(rdata[index])
            result.append(rdata[(index + 1)..<end])
            index = end
        }
        return result
    }

    /// The key/value entries in order, as a DNS-SD client must read them: a string that is empty or starts
    /// with `=` is skipped, and only the first occurrence of a key (compared case-insensitively) counts.
    public var entries: [TXTEntry] {
        var result: [TXTEntry] = []
        var seen = Set<String>()
        for string in strings {
            guard let first = string.first, first != UInt8(ascii: "=") else { continue }
            let equals = string.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = string[string.startIndex..<(equals ?? string.endIndex)]
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard seen.insert(key.lowercased()).inserted else { continue }
            let value = equals.map { Array(string[($0 + 1)...]) }
            result.append(TXTEntry(key: key, value: value))
        }
        return result
    }

    /// The value for `key` (case-insensitive): nil when absent, `.some(nil)` for a boolean key, else the bytes.
    public subscript(key: String) -> [UInt8]?? {
        let wanted = key.lowercased()
        for entry in entries where entry.key.lowercased() == wanted { return .some(entry.value) }
        return nil
    }

    /// True when the key is present, with or without a value (RFC 6763 §6.4).
    public func contains(key: String) -> Bool { self[key] != nil }

    /// `key=value` strings separated by spaces, with non-printable bytes as `\xHH`.
    public var description: String {
        strings.map { string in
            var text = ""
            for byte in string {
                if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
                    text.unicodeScalars.append(Unicode.Scalar(byte))
                } else if byte == UInt8(ascii: "\\") {
                    text += "\\\\"
                } else {
                    let hex = String(byte, radix: 16)
                    text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
                }
            }
            return "\"" + text + "\""
        }.joined(separator: " ")
    }
}

/// One DNS-SD key/value pair of a TXT record. `value` nil is a boolean (present) key.
public struct TXTEntry: Hashable, Sendable {
    public var key: String
    public var value: [UInt8]?

    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }

    /// An entry whose value is the UTF-8 of a string.
    public init(key: String, string: String) {
        self.init(key: key, value: Array(string.utf8))
    }
}

/// Why TXT data could not be built or read.
public enum TXTRecordError: Error, Hashable, Sendable, CustomStringConvertible {
    case stringOverrun(offset: Int)
    case stringTooLong(length: Int)
    case emptyKey
    case invalidKey(String)
    case duplicateKey(String)

    public var description: String {
        switch self {
        case .stringOverrun(let offset):
            return "the TXT string at offset \(offset) runs past the end of the record data"
        case .stringTooLong(let length):
            return "a TXT string of \(length) bytes is longer than the 255 allowed (RFC 1035 §3.3)"
        case .emptyKey:
            return "a TXT key must have at least one character (RFC 6763 §6.4)"
        case .invalidKey(let key):
            return "TXT key '\(key)' may contain only printable ASCII other than '=' (RFC 6763 §6.4)"
        case .duplicateKey(let key):
            return "TXT key '\(key)' is given twice; keys are case-insensitive and must be unique (RFC 6763 §6.4)"
        }
    }
}
