import HeraldBroker
import HeraldIPC
import HeraldSession
import HeraldWire
import Testing

@testable import HeraldDaemon

/// The front ends that serve apps ask the permission rules the same question for the same lookup: the app socket
/// (through the session core: DNSServiceQueryRecord, DNSServiceGetAddrInfo) and the NSS socket (host and address
/// lookups), all by `PermissionRequest.forQuery(name:type:)` (docs/permissions.md, "Record queries and records").
@Suite("One vocabulary of requests for the app socket and NSS")
struct QueryVocabularyTests {
    /// Parks every request and remembers what it was asked.
    final class RecordingGate: SessionGate {
        var asked: [PermissionRequest] = []
        func caller(of connection: ConnectionID) -> CallerIdentity { CallerIdentity(pid: 4000, uid: 1000) }
        func isOperator(_ caller: CallerIdentity) -> Bool { false }
        func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision {
            asked.append(request)
            return .park(reason: "not-determined", explanation: "not-determined: waiting")
        }
        func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
            requests.map { decide($0, for: caller, isNew: false) }
        }
    }

    /// A session core with one open connection, asking `gate`.
    final class AppSocket {
        let gate = RecordingGate()
        let core: SessionCore
        var context: UInt64 = 0

        init() {
            core = SessionCore(gate: gate)
            _ = core.open(ConnectionID(1), user: 1000, pid: 4000, startTime: 1, isOperator: false)
        }

        /// The question the core asked the gate for `request`, nil when it asked none.
        func question(for request: Request) -> PermissionRequest? {
            let before = gate.asked.count
            context += 1
            let header = IPCHeader(
                dataLength: 0, operation: request.operation.rawValue,
                context: ClientContext(rawValue: context))
            _ = core.handle(
                DecodedRequest(header: header, request: request, statusReturn: .passedSocket),
                on: ConnectionID(1), at: 0)
            return gate.asked.count > before ? gate.asked.last : nil
        }

        func queryRecord(_ name: DNSName, _ type: RecordType) -> PermissionRequest? {
            question(for: .query(QueryRecordRequest(name: name.description, rrtype: type.rawValue)))
        }

        func addrInfo(_ name: DNSName) -> PermissionRequest? {
            question(for: .addrInfo(AddrInfoRequest(protocol: [.ipv4, .ipv6], hostname: name.description)))
        }
    }

    static let ipv6Reverse: DNSName = "b.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f.ip6.arpa."
    /// Host names an app or NSS may look up, with what a lookup of their addresses is.
    static let hosts: [(DNSName, PermissionRequest)] = [
        ("printer.local.", .addressLookup("printer.local.")),
        ("Printer.LOCAL.", .addressLookup("Printer.LOCAL.")),
        ("office.printer.local.", .addressLookup("office.printer.local.")),
        ("local.", .query(name: "local.", type: .a)),
        ("Office._ipp._tcp.local.", .resolve(try! ServiceInstanceName(parsing: "Office._ipp._tcp.local."))),
        ("_ipp._tcp.local.", .query(name: "_ipp._tcp.local.", type: .a)),
    ]
    /// Reverse names (NSS makes them of addresses), all address lookups.
    static let reverseNames: [DNSName] = [
        IPv4Address(169, 254, 1, 7).reverseName, "7.1.254.169.IN-ADDR.ARPA.", ipv6Reverse,
    ]

    @Test("a record query asks what forQuery says, for every name and type")
    func queryRecordUsesTheOneRule() {
        let app = AppSocket()
        let names =
            Self.hosts.map(\.0) + Self.reverseNames
            + ["_ipp._tcp.local.", "_color._sub._ipp._tcp.local.", "_services._dns-sd._udp.local.", "in-addr.arpa."]
        for name in names {
            for type in [RecordType.a, .aaaa, .ptr, .srv, .txt, .hinfo] {
                #expect(
                    app.queryRecord(name, type) == PermissionRequest.forQuery(name: name, type: type), "\(type) \(name)"
                )
            }
        }
    }

    @Test(
        "a host's addresses: DNSServiceGetAddrInfo, A and AAAA record queries and NSS ask the same question",
        arguments: hosts.indices)
    func hostLookupsAgree(_ index: Int) {
        let (name, expected) = Self.hosts[index]
        let app = AppSocket()
        #expect(NSSLookupKey.host(name).permissionRequest == expected, "NSS")
        #expect(app.addrInfo(name) == expected, "DNSServiceGetAddrInfo")
        let recordQuery = app.queryRecord(name, .a)
        if case .query = expected {
            #expect(recordQuery == .query(name: name, type: .a), "DNSServiceQueryRecord A")
            #expect(app.queryRecord(name, .aaaa) == .query(name: name, type: .aaaa), "DNSServiceQueryRecord AAAA")
        } else {
            #expect(recordQuery == expected, "DNSServiceQueryRecord A")
            #expect(app.queryRecord(name, .aaaa) == expected, "DNSServiceQueryRecord AAAA")
        }
    }

    @Test("a reverse lookup: a PTR record query and NSS both ask for an address lookup", arguments: reverseNames)
    func reverseLookupsAgree(_ name: DNSName) {
        let app = AppSocket()
        #expect(NSSLookupKey.reverse(name).permissionRequest == .addressLookup(name), "NSS")
        #expect(app.queryRecord(name, .ptr) == .addressLookup(name), "DNSServiceQueryRecord PTR")
    }

    @Test("names outside .local and the reverse zones reach no gate: Unsupported on the app socket")
    func unicastNamesAreNotAsked() {
        let app = AppSocket()
        #expect(app.queryRecord("printer.notlocal.", .a) == nil)
        #expect(app.addrInfo("printer.notlocal.") == nil)
        #expect(app.queryRecord("www.example.com.", .ptr) == nil)
    }
}
