import HeraldBroker
import HeraldWire
import Testing

/// The registered apps of the policy scenarios.
enum Apps {
    /// Browses and advertises `_tictactoe._tcp`; identified by its binary or its unit.
    static let ticTacToe = try! Manifest(
        id: "org.example.tictactoe", name: "Tic Tac Toe", executables: ["/usr/bin/tictactoe"],
        systemdUnits: ["tictactoe.service"], bonjourServices: ["_tictactoe._tcp"],
        usageDescription: "Tic Tac Toe looks for players on your local network.")
    /// Another app, with its own type.
    static let chat = try! Manifest(
        id: "org.example.chat", name: "Chat", executables: ["/usr/bin/chat"], bonjourServices: ["_chat._tcp"],
        usageDescription: "Chat finds people nearby.")
    /// Registered without a usage description.
    static let silent = try! Manifest(
        id: "org.example.silent", name: "Silent", executables: ["/usr/bin/silent"], bonjourServices: ["_silent._tcp"])
    /// Has the multicast entitlement and declares nothing.
    static let scanner = try! Manifest(
        id: "org.example.scanner", name: "Network Scanner", executables: ["/usr/bin/scanner"],
        usageDescription: "Lists everything on the network.", entitlements: [Manifest.multicastEntitlement])

    static let all = [ticTacToe, chat, silent, scanner]
}

/// Shorthands for requests.
func browse(_ type: String) -> PermissionRequest { .browse(try! ServiceType(type)) }
func register(_ type: String) -> PermissionRequest { .register(try! ServiceType(type)) }
func resolve(_ instance: String) -> PermissionRequest { .resolve(try! ServiceInstanceName(parsing: instance)) }
func query(_ name: String, _ type: RecordType) -> PermissionRequest { .query(name: try! DNSName(name), type: type) }
func lookup(_ name: String) -> PermissionRequest { .addressLookup(try! DNSName(name)) }

func caller(
    _ executable: String, uid: UInt32 = 1000, groups: [UInt32] = [1000], unit: SystemdUnit? = nil,
    sha256: SHA256Digest? = nil
) -> CallerIdentity {
    CallerIdentity(
        pid: 4242, uid: uid, groups: groups, executablePath: executable, executableSHA256: sha256,
        systemdUnit: unit)
}

/// The operator group of the scenarios has gid 977.
let policy = PermissionPolicy(operatorRule: OperatorRule(groupName: "herald", groupID: 977))

/// One line of the decision table.
struct Case: CustomTestStringConvertible, Sendable {
    var scenario: String
    var caller: CallerIdentity
    var request: PermissionRequest
    var decisions: [AppID: AppDecision] = [:]
    var outcome: PermissionDecision.Outcome
    var reason: PermissionReason
    var testDescription: String { scenario }
}

let ticTacToeBinary = caller("/usr/bin/tictactoe")
let granted: [AppID: AppDecision] = [Apps.ticTacToe.id: .granted, Apps.scanner.id: .granted]
let denied: [AppID: AppDecision] = [Apps.ticTacToe.id: .denied]

@Suite("The decision rules of docs/permissions.md, Deciding")
struct PermissionPolicyTests {
    static let table: [Case] = [
        // Rule 1: operators.
        Case(
            scenario: "root browses anything", caller: caller("/usr/bin/herald", uid: 0, groups: [0]),
            request: browse("_printer._tcp"), outcome: .allow, reason: .operatorCaller),
        Case(
            scenario: "a member of the operator group browses all types",
            caller: caller("/usr/bin/herald", groups: [1000, 977]), request: .browseAllTypes,
            outcome: .allow, reason: .operatorCaller),
        Case(
            scenario: "an operator's registered app is exempt too", caller: caller("/usr/bin/tictactoe", groups: [977]),
            request: browse("_other._tcp"), outcome: .allow, reason: .operatorCaller),
        // Rule 2: unregistered.
        Case(
            scenario: "an unregistered program browses", caller: caller("/usr/bin/nosy"),
            request: browse("_tictactoe._tcp"), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "an unregistered program registers", caller: caller("/usr/bin/nosy"),
            request: register("_tictactoe._tcp"), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "an unregistered program resolves", caller: caller("/usr/bin/nosy"),
            request: resolve("Game._tictactoe._tcp.local."), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "an unregistered program queries", caller: caller("/usr/bin/nosy"),
            request: query("printer.local.", .txt), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "an unregistered program looks up an address", caller: caller("/usr/bin/nosy"),
            request: lookup("printer.local."), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "an unregistered program browses all types", caller: caller("/usr/bin/nosy"),
            request: .browseAllTypes, outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "a binary next to the registered one is another program",
            caller: caller("/usr/bin/tictactoe-helper"), request: browse("_tictactoe._tcp"),
            outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "a registered binary replaced on disk while running is not recognised",
            caller: CallerIdentity(
                uid: 1000, groups: [1000], executable: ExecutableLink(path: "/usr/bin/tictactoe", isDeleted: true)),
            request: browse("_tictactoe._tcp"), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "a non-member of the operator group is not an operator",
            caller: caller("/usr/bin/nosy", groups: [978]),
            request: browse("_tictactoe._tcp"), outcome: .refuse, reason: .unregistered),
        // Rule 3: no usage description.
        Case(
            scenario: "an app without a usage description browses its own type", caller: caller("/usr/bin/silent"),
            request: browse("_silent._tcp"), outcome: .refuse, reason: .noUsageDescription),
        Case(
            scenario: "an app without a usage description looks up an address", caller: caller("/usr/bin/silent"),
            request: lookup("printer.local"), outcome: .refuse, reason: .noUsageDescription),
        Case(
            scenario: "rule 3 comes before rule 4", caller: caller("/usr/bin/silent"),
            request: browse("_other._tcp"), outcome: .refuse, reason: .noUsageDescription),
        // Rule 4: undeclared types and the entitlement.
        Case(
            scenario: "browsing an undeclared type", caller: ticTacToeBinary,
            request: browse("_other._tcp"), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "the declared name over the other transport is undeclared", caller: ticTacToeBinary,
            request: browse("_tictactoe._udp"), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "a subtype of an undeclared type", caller: ticTacToeBinary,
            request: browse("_fast._sub._other._tcp"), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "registering an undeclared type", caller: ticTacToeBinary,
            request: register("_other._tcp"), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "resolving an instance of an undeclared type", caller: ticTacToeBinary,
            request: resolve("Alice._chat._tcp.local."), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "querying the SRV of another app's service name", caller: ticTacToeBinary,
            request: query("Alice._chat._tcp.local.", .srv), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "querying the PTR of another app's type", caller: ticTacToeBinary,
            request: query("_chat._tcp.local.", .ptr), outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "browsing all types without the entitlement", caller: ticTacToeBinary,
            request: .browseAllTypes, outcome: .refuse, reason: .entitlementRequired),
        Case(
            scenario: "querying the enumeration name without the entitlement", caller: ticTacToeBinary,
            request: query("_services._dns-sd._udp.local.", .ptr), outcome: .refuse, reason: .entitlementRequired),
        Case(
            scenario: "an arbitrary record query without the entitlement", caller: ticTacToeBinary,
            request: query("printer.local.", .hinfo), outcome: .refuse, reason: .entitlementRequired),
        Case(
            scenario: "a reverse lookup is judged like an address lookup (rule 4 does not apply)",
            caller: ticTacToeBinary,
            request: query("7.1.254.169.in-addr.arpa.", .ptr), outcome: .park, reason: .notDetermined),
        Case(
            scenario: "every reverse name is local: Herald answers them only by multicast DNS",
            caller: caller("/usr/bin/nosy"),
            request: query("5.0.0.10.in-addr.arpa.", .ptr), outcome: .refuse, reason: .unregistered),
        Case(
            scenario: "another record type at a reverse name is an arbitrary query", caller: ticTacToeBinary,
            request: query("7.1.254.169.in-addr.arpa.", .hinfo), outcome: .refuse, reason: .entitlementRequired),
        Case(
            scenario: "rule 4 comes before rule 5: a granted app still cannot browse an undeclared type",
            caller: ticTacToeBinary, request: browse("_other._tcp"), decisions: granted,
            outcome: .refuse, reason: .undeclaredType),
        Case(
            scenario: "the entitlement covers undeclared types", caller: caller("/usr/bin/scanner"),
            request: browse("_printer._tcp"), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "the entitlement covers browsing all types", caller: caller("/usr/bin/scanner"),
            request: .browseAllTypes, decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "the entitlement covers arbitrary queries", caller: caller("/usr/bin/scanner"),
            request: query("printer.local.", .hinfo), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "an entitled app is still subject to rule 5", caller: caller("/usr/bin/scanner"),
            request: .browseAllTypes, outcome: .park, reason: .notDetermined),
        // Declared types in any spelling.
        Case(
            scenario: "the declared type in other case", caller: ticTacToeBinary,
            request: browse("_TicTacToe._TCP"), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "the declared type with a trailing dot", caller: ticTacToeBinary,
            request: browse("_tictactoe._tcp."), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "the declared type with its domain", caller: ticTacToeBinary,
            request: register("_tictactoe._tcp.local."), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "a subtype of the declared type", caller: ticTacToeBinary,
            request: browse("_fast._sub._tictactoe._tcp"), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "resolving an instance of the declared type", caller: ticTacToeBinary,
            request: resolve("Bob\\.s Game._TICTACTOE._tcp.local."), decisions: granted, outcome: .allow,
            reason: .granted),
        Case(
            scenario: "querying the TXT of an instance of the declared type", caller: ticTacToeBinary,
            request: query("Bob._tictactoe._tcp.local.", .txt), decisions: granted, outcome: .allow, reason: .granted),
        // Address lookups skip rule 4.
        Case(
            scenario: "an address lookup needs no declared type", caller: ticTacToeBinary,
            request: lookup("printer.local."), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "an A query of a host in .local is an address lookup", caller: ticTacToeBinary,
            request: query("printer.local.", .a), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "an address lookup of a not-determined app is parked", caller: ticTacToeBinary,
            request: lookup("printer.local."), outcome: .park, reason: .notDetermined),
        // Rule 5.
        Case(
            scenario: "a granted app browses its type", caller: ticTacToeBinary,
            request: browse("_tictactoe._tcp"), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "a denied app browses its type", caller: ticTacToeBinary,
            request: browse("_tictactoe._tcp"), decisions: denied, outcome: .park, reason: .denied),
        Case(
            scenario: "a denied app registers its type", caller: ticTacToeBinary,
            request: register("_tictactoe._tcp"), decisions: denied, outcome: .park, reason: .denied),
        Case(
            scenario: "a not-determined app browses its type", caller: ticTacToeBinary,
            request: browse("_tictactoe._tcp"), outcome: .park, reason: .notDetermined),
        Case(
            scenario: "a not-determined app resolves an instance of its type", caller: ticTacToeBinary,
            request: resolve("Game._tictactoe._tcp.local."), outcome: .park, reason: .notDetermined),
        Case(
            scenario: "an interpreted app is recognised by its systemd unit",
            caller: caller("/usr/bin/python3.11", unit: SystemdUnit(name: "tictactoe.service")),
            request: browse("_tictactoe._tcp"), decisions: granted, outcome: .allow, reason: .granted),
        Case(
            scenario: "a user's own unit of the app's unit name is not the app (any user can create one)",
            caller: caller(
                "/usr/bin/python3.11", unit: SystemdUnit(name: "tictactoe.service", manager: .user(uid: 1000))),
            request: browse("_tictactoe._tcp"), decisions: granted, outcome: .refuse, reason: .unregistered),
        // Outside the local network.
        Case(
            scenario: "a type in a unicast domain is refused", caller: caller("/usr/bin/nosy"),
            request: browse("_http._tcp.example.com."), outcome: .refuse, reason: .notLocal),
        Case(
            scenario: "a query for a global name is refused", caller: caller("/usr/bin/nosy"),
            request: query("www.example.com.", .a), outcome: .refuse, reason: .notLocal),
    ]

    @Test("Decision table", arguments: table)
    func decisionTable(_ row: Case) {
        let snapshot = PermissionSnapshot(manifests: Apps.all, decisions: row.decisions)
        let decision = policy.decide(row.request, caller: row.caller, snapshot: snapshot)
        #expect(decision.outcome == row.outcome, "\(decision)")
        #expect(decision.reason == row.reason, "\(decision)")
        #expect(decision.reason.allows == (row.outcome == .allow))
        #expect(decision.reason.isStatic == (row.outcome == .refuse))
        #expect(decision.reason.isParkable == (row.outcome == .park))
        #expect(decision.errorCode == (row.outcome == .allow ? nil : -65555))
        #expect((decision.pendingRequest != nil) == (decision.reason == .notDetermined))
        let judged = policy.judge(row.caller, snapshot: snapshot)
        #expect(
            policy.decide(row.request, for: judged, snapshot: snapshot) == decision,
            "a caller judged once for several requests is decided as when judged for each")
    }

    @Test("A not-determined request carries the pending request operators will see")
    func pendingRequestContent() {
        let decision = policy.decide(
            browse("_fast._sub._TicTacToe._tcp."), caller: ticTacToeBinary,
            snapshot: PermissionSnapshot(manifests: Apps.all))
        #expect(decision.app == Apps.ticTacToe.id)
        #expect(
            decision.pendingRequest
                == PendingRequest(
                    appID: Apps.ticTacToe.id, appName: "Tic Tac Toe",
                    usageDescription: "Tic Tac Toe looks for players on your local network.", operation: .browse,
                    serviceType: "_tictactoe._tcp", subject: "_tictactoe._tcp"))
        #expect(
            decision.explanation == "org.example.tictactoe has not been granted; an operator can run: "
                + "herald grant org.example.tictactoe")
    }

    @Test("Resolves and queries of many instances of one type make one pending subject")
    func pendingSubjectsDeduplicate() {
        let snapshot = PermissionSnapshot(manifests: Apps.all)
        let subjects = [
            resolve("A._tictactoe._tcp.local."), resolve("B._TicTacToe._tcp.local."),
            query("C._tictactoe._tcp.local.", .srv),
        ].map {
            policy.decide($0, caller: ticTacToeBinary, snapshot: snapshot).pendingRequest?.subject
        }
        #expect(subjects == ["_tictactoe._tcp", "_tictactoe._tcp", "_tictactoe._tcp"])
        let scanner = caller("/usr/bin/scanner")
        #expect(
            policy.decide(query("Printer.local.", .hinfo), caller: scanner, snapshot: snapshot)
                .pendingRequest?.subject == "printer.local. HINFO")
        #expect(
            policy.decide(lookup("Printer.local"), caller: ticTacToeBinary, snapshot: snapshot)
                .pendingRequest?.subject == "printer.local.")
        #expect(
            policy.decide(.browseAllTypes, caller: scanner, snapshot: snapshot)
                .pendingRequest?.operation == .browseAllTypes)
    }

    @Test("Refusals explain themselves and say how to fix them")
    func explanations() {
        let snapshot = PermissionSnapshot(manifests: Apps.all)
        let undeclared = policy.decide(browse("_other._tcp"), caller: ticTacToeBinary, snapshot: snapshot)
        #expect(undeclared.explanation.contains("does not declare _other._tcp in NSBonjourServices"))
        let unregistered = policy.decide(browse("_x._tcp"), caller: caller("/usr/bin/nosy"), snapshot: snapshot)
        #expect(unregistered.explanation.contains("/usr/bin/nosy"))
        #expect(unregistered.explanation.contains("herald app add FILE"))
        let entitlement = policy.decide(.browseAllTypes, caller: ticTacToeBinary, snapshot: snapshot)
        #expect(entitlement.explanation.contains(Manifest.multicastEntitlement))
        let event = undeclared.auditEvent(caller: ticTacToeBinary)
        #expect(event.app == Apps.ticTacToe.id)
        #expect(event.operation == "browse")
        #expect(event.serviceType == "_other._tcp")
        #expect(event.decision == "refuse")
        #expect(event.reason == "undeclared-type")
        #expect(event.detail.hasPrefix("browse _other._tcp by pid 4242 uid 1000 /usr/bin/tictactoe: "))
    }

    @Test("Address lookups can be opened to every local user, and nothing else is")
    func openAddressLookups() {
        let open = PermissionPolicy(operatorRule: policy.operatorRule, addressLookupsOpenToAllUsers: true)
        let snapshot = PermissionSnapshot(manifests: Apps.all)
        let nosy = caller("/usr/bin/nosy")
        #expect(open.decide(lookup("printer.local."), caller: nosy, snapshot: snapshot).reason == .addressLookupsOpen)
        #expect(
            open.decide(query("printer.local.", .aaaa), caller: nosy, snapshot: snapshot).reason == .addressLookupsOpen)
        #expect(open.decide(query("printer.local.", .txt), caller: nosy, snapshot: snapshot).reason == .unregistered)
        #expect(open.decide(browse("_http._tcp"), caller: nosy, snapshot: snapshot).reason == .unregistered)
        #expect(policy.decide(lookup("printer.local."), caller: nosy, snapshot: snapshot).reason == .unregistered)
    }

    @Test("DNS-SD's own type is no service: declaring _dns-sd._udp opens none of the names under it")
    func dnssdTypeIsNeverDeclared() throws {
        let sneaky = try Manifest(
            id: "org.example.sneaky", name: "Sneaky", executables: ["/usr/bin/sneaky"],
            bonjourServices: ["_dns-sd._udp"],
            usageDescription: "Wants to see everything.")
        let snapshot = PermissionSnapshot(manifests: Apps.all + [sneaky], decisions: [sneaky.id: .granted])
        let requests = [
            query("_services._dns-sd._udp.local.", .ptr), resolve("_services._dns-sd._udp.local."),
            browse("_dns-sd._udp"), query("b._dns-sd._udp.local.", .ptr), register("_dns-sd._udp"),
        ]
        for request in requests {
            let decision = policy.decide(request, caller: caller("/usr/bin/sneaky"), snapshot: snapshot)
            #expect(decision.reason == .entitlementRequired, "\(request): \(decision)")
        }
        // The explanation names what was asked: publishing in the enumeration is not browsing it.
        let sneakyCaller = caller("/usr/bin/sneaky")
        #expect(
            policy.decide(register("_dns-sd._udp"), caller: sneakyCaller, snapshot: snapshot).explanation
                .hasPrefix("publishing in the service type enumeration (_dns-sd._udp) needs the"))
        #expect(
            policy.decide(browse("_dns-sd._udp"), caller: sneakyCaller, snapshot: snapshot).explanation
                .hasPrefix("browsing all service types needs the"))
        // With the entitlement (and a grant), they are allowed.
        let scanner = PermissionSnapshot(manifests: Apps.all, decisions: granted)
        for request in requests {
            #expect(
                policy.decide(request, caller: caller("/usr/bin/scanner"), snapshot: scanner).reason == .granted,
                "\(request)")
        }
    }

    @Test("Publishing a record under a name that is not a service's needs the entitlement, even where lookups are open")
    func publishingArbitraryNames() {
        let open = PermissionPolicy(operatorRule: policy.operatorRule, addressLookupsOpenToAllUsers: true)
        let snapshot = PermissionSnapshot(manifests: Apps.all, decisions: granted)
        let hostAddress = PermissionRequest.publishRecord(name: "router.local.", type: .a)
        let reverse = PermissionRequest.publishRecord(name: "99.0.77.10.in-addr.arpa.", type: .ptr)
        let global = PermissionRequest.publishRecord(name: "www.example.com.", type: .a)
        for request in [hostAddress, reverse, global] {
            #expect(open.decide(request, caller: caller("/usr/bin/nosy"), snapshot: snapshot).reason == .unregistered)
            let refused = open.decide(request, caller: ticTacToeBinary, snapshot: snapshot)
            #expect(refused.reason == .entitlementRequired, "\(request): \(refused)")
            #expect(refused.explanation.hasPrefix("publishing "), "\(refused.explanation)")
            #expect(open.decide(request, caller: caller("/usr/bin/scanner"), snapshot: snapshot).reason == .granted)
        }
        #expect(hostAddress.operation == .register)
    }

    @Test("A reverse lookup of an address follows the address-lookup rules")
    func reverseLookupsAreAddressLookups() {
        let open = PermissionPolicy(operatorRule: policy.operatorRule, addressLookupsOpenToAllUsers: true)
        let snapshot = PermissionSnapshot(manifests: Apps.all)
        for name in [
            "2.0.77.10.in-addr.arpa.", "b.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f.ip6.arpa.",
        ] {
            #expect(
                policy.decide(lookup(name), caller: caller("/usr/bin/nosy"), snapshot: snapshot).reason == .unregistered
            )
            #expect(policy.decide(lookup(name), caller: ticTacToeBinary, snapshot: snapshot).reason == .notDetermined)
            #expect(
                open.decide(lookup(name), caller: caller("/usr/bin/nosy"), snapshot: snapshot).reason
                    == .addressLookupsOpen)
        }
        // The bare zones are nobody's address.
        #expect(
            policy.decide(lookup("in-addr.arpa."), caller: caller("/usr/bin/nosy"), snapshot: snapshot).reason
                == .notLocal)
    }

    @Test("Without an operator group only uid 0 is an operator")
    func noOperatorGroup() {
        let rule = OperatorRule(groupName: "herald", groupID: nil)
        #expect(rule.isOperator(uid: 0, groups: []))
        #expect(!rule.isOperator(uid: 1000, groups: [977, 0]))
        #expect(OperatorRule(groupName: "herald", groupID: 977).isOperator(uid: 1000, groups: [1000, 977]))
        // The group database is asked by name; root's group exists on every Linux system.
        #expect(OperatorRule.lookUpGroupID("root") == 0)
        #expect(OperatorRule.resolving(groupName: "no-such-group-herald-test").groupID == nil)
    }
}
