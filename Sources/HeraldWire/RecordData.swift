/// The data (RDATA) of a resource record, decoded for the types mDNS and DNS-SD use and kept as
/// opaque bytes for every other type (RFC 3597), so that any record survives a round trip.
public enum RecordData: Hashable, Sendable {
    case a(IPv4Address)
    case aaaa(IPv6Address)
    case ptr(DNSName)
    case cname(DNSName)
    case srv(SRVData)
    case txt(TXTRecord)
    /// CPU and OS character-strings (RFC 1035 §3.3.2).
    case hinfo(cpu: [UInt8], os: [UInt8])
    /// The next domain name and the types present (RFC 4034 §4; mDNS form, RFC 6762 §6.1).
    case nsec(next: DNSName, types: TypeBitmap)
    /// EDNS(0) options, kept as they came (RFC 6891 §6.1.2).
    case opt([UInt8])
    /// Any other type: the bytes exactly as received (RFC 3597).
    case opaque([UInt8])

    /// The type these data belong to, when the case alone says it (nil for `.opaque`).
    public var impliedType: RecordType? {
        switch self {
        case .a: return .a
        case .aaaa: return .aaaa
        case .ptr: return .ptr
        case .cname: return .cname
        case .srv: return .srv
        case .txt: return .txt
        case .hinfo: return .hinfo
        case .nsec: return .nsec
        case .opt: return .opt
        case .opaque: return nil
        }
    }
}

/// The data of an SRV record (RFC 2782).
public struct SRVData: Hashable, Sendable {
    public var priority: UInt16
    public var weight: UInt16
    public var port: UInt16
    public var target: DNSName

    public init(priority: UInt16 = 0, weight: UInt16 = 0, port: UInt16, target: DNSName) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }
}

extension RecordData: CustomStringConvertible {
    /// The data in presentation form, as `dig` would show them.
    public var description: String {
        switch self {
        case .a(let address): return address.description
        case .aaaa(let address): return address.description
        case .ptr(let name), .cname(let name): return name.description
        case .srv(let srv): return "\(srv.priority) \(srv.weight) \(srv.port) \(srv.target)"
        case .txt(let txt): return txt.description
        case .hinfo(let cpu, let os):
            return "\"\(String(decoding: cpu, as: UTF8.self))\" \"\(String(decoding: os, as: UTF8.self))\""
        case .nsec(let next, let types): return "\(next) \(types)"
        case .opt(let bytes), .opaque(let bytes):
            return "\\# \(bytes.count)" + (bytes.isEmpty ? "" : " " + bytes.map(Self.hex).joined())
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
