import HeraldBroker
import HeraldWire
import Testing

/// What a record query is (docs/permissions.md, "Record queries and records"): the one rule every front end uses,
/// `PermissionRequest.forQuery(name:type:)`.
@Suite("What a record query is, by its name and type")
struct QueryClassificationTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var type: RecordType
        var request: PermissionRequest
        var testDescription: String { "\(type) \(name) → \(request)" }
        init(_ name: String, _ type: RecordType, _ request: PermissionRequest) {
            (self.name, self.type, self.request) = (name, type, request)
        }
    }

    static let ipv6Reverse = "b.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f.ip6.arpa."

    static let table: [Row] = [
        // Address lookups: A/AAAA of any name under local. that is no service's, whatever its labels.
        Row("printer.local.", .a, lookup("printer.local.")),
        Row("Printer.LOCAL.", .aaaa, lookup("Printer.LOCAL.")),
        Row("office.printer.local.", .a, lookup("office.printer.local.")),
        Row("local.", .a, query("local.", .a)),
        Row("printer.local.", .ptr, query("printer.local.", .ptr)),
        Row("printer.local.", .hinfo, query("printer.local.", .hinfo)),
        // Reverse lookups: PTR of a name under a reverse zone, not the zone itself.
        Row("7.1.254.169.in-addr.arpa.", .ptr, lookup("7.1.254.169.in-addr.arpa.")),
        Row("7.1.254.169.IN-ADDR.ARPA.", .ptr, lookup("7.1.254.169.IN-ADDR.ARPA.")),
        Row(ipv6Reverse, .ptr, lookup(ipv6Reverse)),
        Row("169.in-addr.arpa.", .ptr, lookup("169.in-addr.arpa.")),
        Row("in-addr.arpa.", .ptr, query("in-addr.arpa.", .ptr)),
        Row("ip6.arpa.", .ptr, query("ip6.arpa.", .ptr)),
        Row("in-addr.arpa.", .a, query("in-addr.arpa.", .a)),
        Row("7.1.254.169.in-addr.arpa.", .a, query("7.1.254.169.in-addr.arpa.", .a)),
        Row("7.1.254.169.in-addr.arpa.", .txt, query("7.1.254.169.in-addr.arpa.", .txt)),
        // Service names: the type, subtype, instance and enumeration names.
        Row("_ipp._tcp.local.", .ptr, browse("_ipp._tcp")),
        Row("_color._sub._ipp._tcp.local.", .ptr, browse("_color._sub._ipp._tcp")),
        Row("_ipp._tcp.local.", .srv, query("_ipp._tcp.local.", .srv)),
        Row("_ipp._tcp.local.", .a, query("_ipp._tcp.local.", .a)),
        Row("Office._ipp._tcp.local.", .srv, resolve("Office._ipp._tcp.local.")),
        Row("Office._ipp._tcp.local.", .txt, resolve("Office._ipp._tcp.local.")),
        Row("Office._ipp._tcp.local.", .a, resolve("Office._ipp._tcp.local.")),
        Row("_services._dns-sd._udp.local.", .ptr, .browseAllTypes),
        Row("_services._dns-sd._udp.local.", .txt, query("_services._dns-sd._udp.local.", .txt)),
        // Outside .local and the reverse zones: a plain query, refused as not-local.
        Row("printer.notlocal.", .a, query("printer.notlocal.", .a)),
        Row("www.example.com.", .aaaa, query("www.example.com.", .aaaa)),
        Row("_ipp._tcp.example.com.", .ptr, query("_ipp._tcp.example.com.", .ptr)),
    ]

    @Test("the request a query amounts to", arguments: table)
    func classification(_ row: Row) throws {
        let name = try DNSName(row.name)
        #expect(PermissionRequest.forQuery(name: name, type: row.type) == row.request)
    }

    @Test("A and AAAA of a name are judged alike", arguments: table)
    func addressTypesAgree(_ row: Row) throws {
        let name = try DNSName(row.name)
        #expect(
            PermissionRequest.forQuery(name: name, type: .a)
                == PermissionRequest.forQuery(name: name, type: .aaaa)
                .replacingType(with: .a))
    }

    @Test("a query and the request it amounts to touch the same thing", arguments: table)
    func sameTarget(_ row: Row) throws {
        let name = try DNSName(row.name)
        #expect(RequestTarget(.query(name: name, type: row.type)) == RequestTarget(row.request))
    }

    @Test("a reverse lookup through the app socket joins the app's one pending request for address lookups")
    func reverseLookupsFoldIntoAddressLookups() throws {
        let snapshot = PermissionSnapshot(manifests: Apps.all)
        let decisions = try ["7.1.254.169.in-addr.arpa.", "office.printer.local."].map { name in
            let type: RecordType = name.hasSuffix("arpa.") ? .ptr : .a
            return policy.decide(
                PermissionRequest.forQuery(name: try DNSName(name), type: type), caller: ticTacToeBinary,
                snapshot: snapshot)
        }
        #expect(decisions.map(\.reason) == [.notDetermined, .notDetermined])
        #expect(decisions.map { $0.pendingRequest?.operation } == [.addressLookup, .addressLookup])
        #expect(
            decisions.map { $0.pendingRequest?.folded.subject }
                == [PendingRequest.addressLookupsSubject, PendingRequest.addressLookupsSubject])
    }
}

extension PermissionRequest {
    /// The same request with an A or AAAA query's type set to `type` (other requests are unchanged).
    fileprivate func replacingType(with type: RecordType) -> PermissionRequest {
        if case .query(let name, let old) = self, old == .a || old == .aaaa { return .query(name: name, type: type) }
        return self
    }
}
