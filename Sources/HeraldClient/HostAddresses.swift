import HeraldIPC

/// What an address lookup of one host (`DNSServiceGetAddrInfo` for IPv4 and IPv6, asking for negative answers
/// with `kDNSServiceFlagsReturnIntermediates`) has learned so far: the host's addresses, and the families a peer's
/// NSEC record says the host does not have.
///
/// The lookup is complete when each family has an address or such a negative answer: nothing more is coming, so a
/// resolution can be shown at once instead of after a wait for addresses that may never come.
public struct HostAddresses: Equatable, Sendable {
    /// An address family, by the record type that carries it.
    public enum Family: UInt16, CaseIterable, Sendable {
        case ipv4 = 1
        case ipv6 = 28

        /// The family of an address's rdata (4 or 16 bytes), or nil for another length.
        public init?(rdata: [UInt8]) {
            switch rdata.count {
            case 4: self = .ipv4
            case 16: self = .ipv6
            default: return nil
            }
        }
    }

    /// The addresses' rdata in the order they became known.
    public private(set) var addresses: [[UInt8]] = []
    /// The families a live negative answer says the host does not have.
    public private(set) var absentFamilies: Set<Family> = []

    public init() {}

    /// True when every family has an address or a negative answer.
    public var isComplete: Bool {
        Family.allCases.allSatisfy { family in
            absentFamilies.contains(family) || addresses.contains { Family(rdata: $0) == family }
        }
    }

    /// Takes one reply of the lookup: an address added or removed, or a negative answer shown or hidden
    /// (NoSuchRecord with or without the Add flag). Returns true if it changed what is known.
    @discardableResult
    public mutating func apply(_ reply: AddrInfoReply) -> Bool {
        guard let family = Family(rawValue: reply.rrtype) else { return false }
        let added = reply.flags.contains(.add)
        switch reply.error {
        case .noSuchRecord:
            return added ? absentFamilies.insert(family).inserted : absentFamilies.remove(family) != nil
        case .noError:
            guard Family(rdata: reply.rdata) == family else { return false }
            if added {
                guard !addresses.contains(reply.rdata) else { return false }
                addresses.append(reply.rdata)
                return true
            }
            guard let index = addresses.firstIndex(of: reply.rdata) else { return false }
            addresses.remove(at: index)
            return true
        default:
            return false
        }
    }
}
