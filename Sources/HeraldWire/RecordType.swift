/// A resource record type (RFC 1035 §3.2.2 and later registrations). Any 16-bit value is valid.
public struct RecordType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let a = RecordType(1)
    public static let ns = RecordType(2)
    public static let cname = RecordType(5)
    public static let soa = RecordType(6)
    public static let ptr = RecordType(12)
    public static let hinfo = RecordType(13)
    public static let mx = RecordType(15)
    public static let txt = RecordType(16)
    public static let aaaa = RecordType(28)
    public static let srv = RecordType(33)
    public static let opt = RecordType(41)
    public static let nsec = RecordType(47)
    /// Only meaningful in questions: every type (RFC 1035 §3.2.3, "*").
    public static let any = RecordType(255)

    private static let mnemonics: [UInt16: String] = [
        1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 13: "HINFO", 15: "MX", 16: "TXT", 28: "AAAA",
        33: "SRV", 41: "OPT", 47: "NSEC", 255: "ANY",
    ]

    /// The mnemonic (`A`, `SRV` …) or the RFC 3597 generic form `TYPE1234`.
    public var description: String { Self.mnemonics[rawValue] ?? "TYPE\(rawValue)" }

    /// Parses a mnemonic (case-insensitive) or `TYPEnnn`.
    public init?(mnemonic: String) {
        let upper = mnemonic.uppercased()
        if let match = Self.mnemonics.first(where: { $0.value == upper }) {
            self.init(match.key)
        } else if upper.hasPrefix("TYPE"), upper.count > 4, upper.dropFirst(4).allSatisfy({ ("0"..."9").contains($0) }),
            let value = UInt16(upper.dropFirst(4))
        {
            self.init(value)
        } else {
            return nil
        }
    }

    public static func < (lhs: RecordType, rhs: RecordType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A record class, without the mDNS cache-flush / unicast-response bit (RFC 6762 §10.2, §5.4).
public struct RecordClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let internet = RecordClass(1)
    /// Only meaningful in questions: every class.
    public static let any = RecordClass(255)

    public var description: String {
        switch rawValue {
        case 1: return "IN"
        case 255: return "ANY"
        default: return "CLASS\(rawValue)"
        }
    }
}
