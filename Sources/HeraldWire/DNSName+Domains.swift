/// The domains multicast DNS serves, as predicates on names. Every check compares whole labels, ignoring ASCII case
/// (``DNSName/hasSuffix(_:)``), so `notlocal.` is not in `local.` and `Printer.LOCAL.` is.
extension DNSName {
    /// `local.`, the domain multicast DNS serves (RFC 6762 §3).
    public static let localDomain: DNSName = "local."

    /// The reverse-mapping zones, `in-addr.arpa.` (RFC 1035 §3.5) and `ip6.arpa.` (RFC 3596 §2.5). Hosts answer for
    /// the reverse names of their own addresses by multicast DNS (RFC 6762 §4).
    public static let reverseMappingZones: [DNSName] = ["in-addr.arpa.", "ip6.arpa."]

    /// True for `local.` and every name under it.
    public var isInLocalDomain: Bool { hasSuffix(Self.localDomain) }

    /// True for a name under `local.`, `local.` itself excluded: a name a host or service can have.
    public var isBelowLocalDomain: Bool { isInLocalDomain && labelCount > Self.localDomain.labelCount }

    /// True for the reverse-mapping zones and every name in them.
    public var isInReverseMappingZone: Bool { Self.reverseMappingZones.contains { hasSuffix($0) } }

    /// True for a name in a reverse-mapping zone, the zone itself excluded: the name of an address
    /// (`1.0.0.10.in-addr.arpa.`) or of a network (`10.in-addr.arpa.`).
    public var isReverseMappingName: Bool {
        Self.reverseMappingZones.contains { hasSuffix($0) && labelCount > $0.labelCount }
    }

    /// True for the names Herald serves by multicast DNS: `local.` and the reverse-mapping zones, with every name
    /// in them. Anything else would need unicast DNS.
    public var isMulticastDNSName: Bool { isInLocalDomain || isInReverseMappingZone }
}
