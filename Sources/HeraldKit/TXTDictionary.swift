/// The key/value attributes of a DNS-SD TXT record, following RFC 6763 §6.
///
/// - Keys are compared ignoring ASCII case (§6.4) and keep the spelling they were given.
/// - A key present without `=` is a boolean attribute (``TXTValue/flag``); `key=` has an empty value.
/// - Values are bytes and may be binary (§6.5).
/// - Reading a record keeps the first occurrence of a key and ignores later ones, strings without a key
///   (empty, or starting with `=`), as the RFC tells clients to (§6.4).
/// - Attributes keep their order, so that a record read and written again is unchanged.
public struct TXTDictionary: Hashable, Sendable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One attribute, with the key as given.
    public struct Entry: Hashable, Sendable {
        /// The key, spelled as given.
        public var key: String
        /// The attribute's value.
        public var value: TXTValue
    }

    /// The attributes in order.
    public private(set) var entries: [Entry] = []

    /// An empty dictionary (written as the one-empty-string record, RFC 6763 §6.1).
    public init() {}

    public init(dictionaryLiteral elements: (String, TXTValue)...) {
        for (key, value) in elements { self[key] = value }
    }

    /// Reads the attributes of TXT record data (a sequence of length-prefixed strings). Malformed strings
    /// are skipped as §6.4 says; a length that runs past the end ends the record.
    public init(rdata: [UInt8]) {
        var index = 0
        while index < rdata.count {
            let length = Int(rdata[index])
            let start = index + 1
            let end = start + length
            guard end <= rdata.count else { break }
            index = end
            let string = rdata[start..<end]
            let equals = string.firstIndex(of: UInt8(ascii: "=")) ?? end
            guard equals > start else { continue }  // an empty string, or no key before "="
            guard let key = String(validating: rdata[start..<equals], as: UTF8.self) else { continue }
            guard self[key] == nil else { continue }  // §6.4: only the first occurrence counts
            let value: TXTValue = equals == end ? .flag : .data(Array(rdata[(equals + 1)..<end]))
            entries.append(Entry(key: key, value: value))
        }
    }

    /// The value for `key` (any case); setting nil removes the attribute, setting a value for a key that is
    /// there replaces it in place.
    public subscript(key: String) -> TXTValue? {
        get { index(of: key).map { entries[$0].value } }
        set {
            if let position = index(of: key) {
                if let newValue { entries[position].value = newValue } else { entries.remove(at: position) }
            } else if let newValue {
                entries.append(Entry(key: key, value: newValue))
            }
        }
    }

    /// The keys in order, as given.
    public var keys: [String] { entries.map(\.key) }

    /// The number of attributes.
    public var count: Int { entries.count }
    /// True when there are no attributes.
    public var isEmpty: Bool { entries.isEmpty }

    /// The text value for `key`; nil when absent, a flag, or not UTF-8.
    public func string(_ key: String) -> String? { self[key]?.string }

    /// A boolean attribute: true when `key` is present at all (with or without a value), as §6.4 reads it.
    public func contains(_ key: String) -> Bool { index(of: key) != nil }

    /// The TXT record data for these attributes; an empty dictionary gives the single empty string.
    /// Throws when a key is empty, contains `=` or a character outside printable ASCII (§6.4), or a string
    /// or the whole record is too long (255 bytes per string, 65,535 in all).
    public func rdata() throws(HeraldError) -> [UInt8] {
        guard !entries.isEmpty else { return [0] }
        var bytes: [UInt8] = []
        for entry in entries {
            let key = Array(entry.key.utf8)
            guard !key.isEmpty else { throw .invalidRequest("a TXT key is empty") }
            guard key.allSatisfy({ (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "=") }) else {
                throw .invalidRequest(
                    "the TXT key \"\(entry.key)\" must be printable ASCII without \"=\" (RFC 6763 §6.4)")
            }
            var string = key
            if case .data(let value) = entry.value { string += [UInt8(ascii: "=")] + value }
            guard string.count <= 255 else {
                throw .invalidRequest(
                    "the TXT attribute \"\(entry.key)\" is \(string.count) bytes; at most 255 fit (RFC 6763 §6.1)")
            }
            bytes.append(UInt8(string.count))
            bytes += string
        }
        guard bytes.count <= 65_535 else {
            throw .invalidRequest("the TXT record is \(bytes.count) bytes; at most 65,535 fit")
        }
        return bytes
    }

    /// Equal when the same keys (ignoring case) have the same values, in any order.
    public static func == (lhs: TXTDictionary, rhs: TXTDictionary) -> Bool {
        lhs.count == rhs.count && lhs.entries.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        let folded = entries.map { (ServiceInstance.folded($0.key), $0.value) }.sorted { $0.0 < $1.0 }
        for (key, value) in folded {
            hasher.combine(key)
            hasher.combine(value)
        }
    }

    public var description: String {
        "["
            + entries.map { entry in
                if case .flag = entry.value { return entry.key }
                return "\(entry.key)=\(entry.value)"
            }.joined(separator: ", ") + "]"
    }

    private func index(of key: String) -> Int? {
        let wanted = ServiceInstance.folded(key)
        return entries.firstIndex { ServiceInstance.folded($0.key) == wanted }
    }
}
