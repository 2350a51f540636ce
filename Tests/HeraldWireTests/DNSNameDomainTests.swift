import HeraldWire
import Testing

/// The domains multicast DNS serves (`local.`, RFC 6762 §3) and the reverse-mapping zones, as predicates on names.
@Suite("DNS names: .local and the reverse-mapping zones")
struct DNSNameDomainTests {
    private func parse(_ text: String) throws(DNSNameError) -> DNSName { try DNSName(text) }

    /// name → (isInLocalDomain, isBelowLocalDomain, isInReverseMappingZone, isReverseMappingName, isMulticastDNSName)
    static let table: [(String, Bool, Bool, Bool, Bool, Bool)] = [
        ("local.", true, false, false, false, true),
        ("LOCAL.", true, false, false, false, true),
        ("printer.local.", true, true, false, false, true),
        ("Printer.LoCaL.", true, true, false, false, true),
        ("My Printer._ipp._tcp.local.", true, true, false, false, true),
        ("a.b.local.", true, true, false, false, true),
        // Suffixes of labels are not labels.
        ("notlocal.", false, false, false, false, false),
        ("printer.notlocal.", false, false, false, false, false),
        ("xin-addr.arpa.", false, false, false, false, false),
        ("1.0.0.10.notin-addr.arpa.", false, false, false, false, false),
        ("local.example.", false, false, false, false, false),
        ("printer.local.example.", false, false, false, false, false),
        (".", false, false, false, false, false),
        ("arpa.", false, false, false, false, false),
        ("in-addr.arpa.", false, false, true, false, true),
        ("IN-ADDR.ARPA.", false, false, true, false, true),
        ("ip6.arpa.", false, false, true, false, true),
        ("10.in-addr.arpa.", false, false, true, true, true),
        ("1.0.0.10.In-Addr.Arpa.", false, false, true, true, true),
        ("b.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f.IP6.arpa.", false, false, true, true, true),
    ]

    @Test("each predicate compares whole labels, ignoring case", arguments: table)
    func predicates(_ row: (String, Bool, Bool, Bool, Bool, Bool)) throws {
        let name = try parse(row.0)
        #expect(name.isInLocalDomain == row.1, "isInLocalDomain")
        #expect(name.isBelowLocalDomain == row.2, "isBelowLocalDomain")
        #expect(name.isInReverseMappingZone == row.3, "isInReverseMappingZone")
        #expect(name.isReverseMappingName == row.4, "isReverseMappingName")
        #expect(name.isMulticastDNSName == row.5, "isMulticastDNSName")
    }

    @Test("an address's reverse name is a reverse-mapping name")
    func reverseNamesOfAddresses() {
        #expect(IPv4Address(192, 0, 2, 1).reverseName.isReverseMappingName)
        #expect(IPv6Address(high: 0xFE80_0000_0000_0000, low: 1).reverseName.isReverseMappingName)
    }

    @Test("a label holding a dot is one label: `a\\.local.` is not in .local")
    func escapedDot() throws {
        #expect(try !parse(#"printer\.local.example."#).isInLocalDomain)
        #expect(try !parse(#"x.in-addr\.arpa."#).isInReverseMappingZone)
    }
}
