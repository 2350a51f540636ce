import HeraldBroker
import HeraldIPC
import HeraldSession
import HeraldWire
import Testing

@testable import HeraldAvahi
@testable import HeraldEngine

/// A permission layer for the front end's tests: one decision for every request, changed by the test.
final class FixedGate: SessionGate {
    var decision = AccessDecision.allow
    /// True when the operator rule counts the caller as an operator.
    var callerIsOperator = false
    func caller(of connection: ConnectionID) -> CallerIdentity { CallerIdentity(pid: 4242, uid: 1000) }
    func isOperator(_ caller: CallerIdentity) -> Bool { callerIsOperator }
    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision { decision }
    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
        requests.map { _ in decision }
    }
}

final class FixedHost: AvahiHostFacts {
    let hostLabel = "herald-box"
    let localServiceCookie: UInt32 = 1234
    let nssSupportAvailable = true
    func interfaceName(ofIndex index: Int32) -> String? { index == 2 ? "eth0" : nil }
    func interfaceIndex(ofName name: String) -> Int32? { name == "eth0" ? 2 : nil }
}

/// The front end driven as the bus shell drives it, against the real session core; engine commands are collected
/// and engine events fed back by hand.
final class FrontEndHarness {
    let gate = FixedGate()
    let frontEnd: AvahiFrontEnd
    var now: Int64 = 1000
    var commands: [EngineCommand] = []
    var signals: [AvahiSignal] = []
    static let client = ":1.7"
    static let link = LinkID(interfaceIndex: 2, family: .ipv4)

    init() {
        frontEnd = AvahiFrontEnd(
            core: SessionCore(gate: gate, owner: .avahiSessions, reportsFamilies: true), host: FixedHost())
        _ = frontEnd.admit(Self.client, user: 1000, pid: 4242, startTime: 1, isOperator: false)
    }

    @discardableResult
    func call(
        _ member: String, _ arguments: [DBusValue] = [], path: String = "/",
        interface: String = AvahiInterfaceSpec.serverName, sender: String = FrontEndHarness.client
    ) -> AvahiCallResult {
        let result = frontEnd.handle(
            AvahiCall(sender: sender, path: path, interface: interface, member: member, arguments: arguments),
            token: 1, at: now)
        collect()
        return result
    }

    func collect() {
        commands += frontEnd.takeEngineCommands()
        signals += frontEnd.takeSignals()
    }

    func deliver(_ event: OperationEvent, to id: OperationID) {
        frontEnd.receive(event, for: id)
        frontEnd.flush()
        collect()
    }

    func advance(by milliseconds: Int64) {
        now += milliseconds
        frontEnd.advance(to: now)
        collect()
    }

    /// The engine operation of the last command of a kind.
    func lastBrowse() -> OperationID? {
        commands.reversed().compactMap { if case .browse(let id, _, _) = $0 { id } else { nil } }.first
    }

    static func path(_ result: AvahiCallResult) -> String? {
        guard case .reply(let values) = result, values.count == 1, case .objectPath(let path) = values[0] else {
            return nil
        }
        return path
    }

    static func name(_ text: String) -> DNSName { try! DNSName(text) }
}

@Suite struct AvahiFrontEndTests {
    @Test func serverMethodsAnswerAsAvahiDoes() {
        let harness = FrontEndHarness()
        #expect(harness.call("GetVersionString") == .reply([.string("avahi 0.8")]))
        #expect(harness.call("GetAPIVersion") == .reply([.uint32(0x0203)]))
        #expect(harness.call("GetHostName") == .reply([.string("herald-box")]))
        #expect(harness.call("GetHostNameFqdn") == .reply([.string("herald-box.local")]))
        #expect(harness.call("GetDomainName") == .reply([.string("local")]))
        #expect(harness.call("GetState", interface: AvahiInterfaceSpec.server2Name) == .reply([.int32(2)]))
        #expect(harness.call("GetLocalServiceCookie") == .reply([.uint32(1234)]))
        #expect(harness.call("IsNSSSupportAvailable") == .reply([.boolean(true)]))
        #expect(harness.call("GetNetworkInterfaceNameByIndex", [.int32(2)]) == .reply([.string("eth0")]))
        #expect(harness.call("GetNetworkInterfaceIndexByName", [.string("eth0")]) == .reply([.int32(2)]))
        #expect(harness.call("GetNetworkInterfaceIndexByName", [.string("wlan9")]) == .error(.invalidInterface))
        #expect(harness.call("GetAlternativeServiceName", [.string("Web #2")]) == .reply([.string("Web #3")]))
        // A call whose arguments are not the method's signature, and a method Avahi does not have.
        #expect(harness.call("GetNetworkInterfaceNameByIndex", [.string("2")]) == .error(.invalidArguments))
        #expect(harness.call("Frobnicate") == .error(.unknownMethod("Frobnicate", AvahiInterfaceSpec.serverName)))
        #expect(harness.call("SetHostName", [.string("other")]) == .error(.notPermitted))
    }

    @Test("SetHostName: refused to anyone but an operator, checked as Avahi checks it, handed on, then StateChanged")
    func setHostNameIsAnOperatorsAct() {
        let harness = FrontEndHarness()
        #expect(harness.call("SetHostName", [.string("other")]) == .error(.notPermitted))
        #expect(harness.frontEnd.takeHostLabelRequests().isEmpty)
        harness.gate.callerIsOperator = true
        for bad in ["", "other.local", String(repeating: "x", count: 64), "tab\there"] {
            #expect(harness.call("SetHostName", [.string(bad)]) == .error(.invalidHostName), "\(bad)")
        }
        #expect(harness.call("SetHostName", [.string("Herald-Box")]) == .error(.noChange))
        #expect(harness.frontEnd.takeHostLabelRequests().isEmpty)
        #expect(harness.call("SetHostName", [.string("other")]) == .reply([]))
        let requests = harness.frontEnd.takeHostLabelRequests()
        #expect(requests.map(\.label) == ["other"])
        #expect(requests.map(\.client) == [FrontEndHarness.client])
        // Once the daemon has the engine take it, every client hears the server register, then run.
        harness.frontEnd.hostRenamed()
        harness.collect()
        #expect(harness.signals.map(\.member) == ["StateChanged", "StateChanged"])
        #expect(harness.signals.map(\.destination) == ["", ""])
        #expect(harness.signals.map { $0.arguments.first } == [.int32(1), .int32(2)])
    }

    @Test func introspectionGivesAvahisSignatures() throws {
        let harness = FrontEndHarness()
        let answer = harness.call("Introspect", interface: AvahiInterfaceSpec.introspectableName)
        guard case .reply(let values) = answer, values.count == 1, case .string(let xml) = values[0] else {
            Issue.record("no introspection")
            return
        }
        #expect(xml.contains("<interface name=\"org.freedesktop.Avahi.Server2\">"))
        #expect(
            xml.contains(
                "<method name=\"ServiceBrowserNew\">\n   <arg name=\"interface\" type=\"i\" direction=\"in\"/>\n"
                    + "   <arg name=\"protocol\" type=\"i\" direction=\"in\"/>\n"
                    + "   <arg name=\"type\" type=\"s\" direction=\"in\"/>"))
        let resolve = try #require(AvahiInterfaceSpec.server.method("ResolveService"))
        #expect(resolve.inputSignature == "iisssiu")
        #expect(resolve.outputs.map(\.type).joined() == "iissssisqaayu")
        #expect(AvahiInterfaceSpec.entryGroup.method("AddService")?.inputSignature == "iiussssqaay")
    }

    @Test func aBrowserSignalsItsOwnerWhatTheEngineFinds() throws {
        let harness = FrontEndHarness()
        let result = harness.call(
            "ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])
        let path = try #require(FrontEndHarness.path(result))
        #expect(path == "/Client1/ServiceBrowser1")
        let id = try #require(harness.lastBrowse())
        #expect(EngineOperationOwner(of: id) == .avahiSessions)
        #expect(harness.commands == [.browse(id, type: FrontEndHarness.name("_http._tcp.local."), interface: nil)])
        harness.deliver(.instanceAdded(FrontEndHarness.name("My Web._http._tcp.local."), FrontEndHarness.link), to: id)
        let itemNew = AvahiSignal(
            destination: FrontEndHarness.client, path: path, interface: AvahiInterfaceSpec.serviceBrowserName,
            member: "ItemNew",
            arguments: [.int32(2), .int32(0), .string("My Web"), .string("_http._tcp"), .string("local"), .uint32(4)])
        #expect(harness.signals == [itemNew])
        harness.advance(by: 0)
        #expect(harness.signals.last?.member == "CacheExhausted")
        harness.advance(by: 1000)
        #expect(harness.signals.last?.member == "AllForNow")
        harness.deliver(
            .instanceRemoved(FrontEndHarness.name("My Web._http._tcp.local."), FrontEndHarness.link), to: id)
        #expect(harness.signals.last?.member == "ItemRemove")
        // Free ends the engine's browse.
        #expect(harness.call("Free", path: path, interface: AvahiInterfaceSpec.serviceBrowserName) == .reply([]))
        #expect(harness.commands.last == .cancel(id))
    }

    @Test("results are reported per IP family, as Avahi does; a browser or resolver made for one hears only that one")
    func resultsPerFamily() throws {
        let harness = FrontEndHarness()
        let v6 = LinkID(interfaceIndex: 2, family: .ipv6)
        let any = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])))
        let only6 = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceBrowserNew", [.int32(2), .int32(1), .string("_http._tcp"), .string(""), .uint32(0)])))
        let browses = harness.commands.compactMap { if case .browse(let id, _, _) = $0 { id } else { nil } }
        let instance = FrontEndHarness.name("My Web._http._tcp.local.")
        for id in browses {
            harness.deliver(.instanceAdded(instance, FrontEndHarness.link), to: id)
            harness.deliver(.instanceAdded(instance, v6), to: id)
        }
        func items(_ path: String) -> [String] {
            harness.signals.filter { $0.path == path && $0.member.hasPrefix("Item") }.map { signal in
                "\(signal.member) \(signal.arguments[1])"
            }
        }
        #expect(items(any) == ["ItemNew 0", "ItemNew 1"])
        #expect(items(only6) == ["ItemNew 1"])
        // A resolver for IPv6 (as avahi-browse -r makes one for each ItemNew) hears the IPv6 answer alone.
        harness.signals.removeAll()
        let resolver = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceResolverNew",
                    [
                        .int32(2), .int32(1), .string("My Web"), .string("_http._tcp"), .string("local"),
                        .int32(-1), .uint32(0),
                    ])))
        let resolve = try #require(
            harness.commands.compactMap { if case .resolve(let id, _, _) = $0 { id } else { nil } }.last)
        for link in [FrontEndHarness.link, v6] {
            harness.deliver(
                .resolved(
                    ResolvedService(
                        instance: instance, link: link, target: FrontEndHarness.name("peer.local."), port: 8080,
                        priority: 0, weight: 0, txt: .empty, addresses: [])), to: resolve)
        }
        let lookups = harness.commands.compactMap { command -> OperationID? in
            if case .query(let query, let name, .a, 2, _) = command, name == FrontEndHarness.name("peer.local.") {
                return query
            }
            return nil
        }
        let lookup = try #require(lookups.last)
        for link in [FrontEndHarness.link, v6] {
            harness.deliver(
                .recordAdded(
                    ResourceRecord(
                        name: FrontEndHarness.name("peer.local."), ttl: 120, data: .a(IPv4Address(10, 0, 0, 9))),
                    link), to: lookup)
        }
        let found = harness.signals.filter { $0.path == resolver && $0.member == "Found" }
        #expect(found.map { $0.arguments[1] } == [.int32(1)], "\(harness.signals)")
    }

    @Test func anotherClientCannotUseAnObject() throws {
        let harness = FrontEndHarness()
        _ = harness.frontEnd.admit(":1.8", user: 1001, pid: 5000, startTime: 1, isOperator: false)
        let path = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])))
        #expect(
            harness.call("Free", path: path, interface: AvahiInterfaceSpec.serviceBrowserName, sender: ":1.8")
                == .error(.accessDenied))
    }

    @Test func aRefusedCallerGetsNotPermittedAndNothingStarts() {
        let harness = FrontEndHarness()
        harness.gate.decision = .refuse(reason: "unregistered", explanation: "unregistered")
        let result = harness.call(
            "ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])
        #expect(result == .error(.notPermitted))
        #expect(harness.commands.isEmpty)
        #expect(harness.frontEnd.objectCount == 0)
        harness.advance(by: 2000)
        #expect(harness.signals.isEmpty)
    }

    @Test func aParkedBrowserIsSilentUntilGrantedAndFailsWhenDenied() throws {
        let harness = FrontEndHarness()
        harness.gate.decision = .park(reason: "pending", explanation: "pending")
        let path = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])))
        harness.advance(by: 2000)
        #expect(harness.commands.isEmpty)
        #expect(harness.signals.isEmpty)
        harness.gate.decision = .allow
        harness.frontEnd.accessChanged()
        harness.collect()
        let id = try #require(harness.lastBrowse())
        harness.deliver(.instanceAdded(FrontEndHarness.name("Peer._http._tcp.local."), FrontEndHarness.link), to: id)
        #expect(harness.signals.map(\.member) == ["ItemNew"])
        #expect(harness.signals.first?.path == path)
        harness.gate.decision = .refuse(reason: "denied", explanation: "denied")
        harness.frontEnd.accessChanged()
        harness.collect()
        #expect(harness.commands.last == .cancel(id))
        #expect(
            harness.signals.last?.member == "Failure"
                && harness.signals.last?.arguments == [.string("org.freedesktop.Avahi.NotPermittedError")])
    }

    @Test func aResolverFindsTheHostsAddressAndSignalsFound() throws {
        let harness = FrontEndHarness()
        let path = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceResolverNew",
                    [
                        .int32(-1), .int32(-1), .string("My Web"), .string("_http._tcp"), .string("local"),
                        .int32(0), .uint32(0),
                    ])))
        guard case .resolve(let id, let instance, nil) = harness.commands.first else {
            Issue.record("no resolve: \(harness.commands)")
            return
        }
        #expect(instance == FrontEndHarness.name("My Web._http._tcp.local."))
        harness.deliver(
            .resolved(
                ResolvedService(
                    instance: instance, link: FrontEndHarness.link, target: FrontEndHarness.name("peer.local."),
                    port: 8080, priority: 0, weight: 0,
                    txt: try TXTRecord(strings: [Array("k=v".utf8), Array("path=/".utf8), Array("flag".utf8)]),
                    addresses: [])), to: id)
        let queries = harness.commands.compactMap { command -> (OperationID, RecordType)? in
            if case .query(let query, let name, let type, 2, _) = command, name == FrontEndHarness.name("peer.local.") {
                return (query, type)
            }
            return nil
        }
        // aprotocol 0 (IPv4): the A record only.
        #expect(queries.map(\.1) == [.a])
        let query = try #require(queries.first?.0)
        harness.deliver(
            .recordAdded(
                ResourceRecord(
                    name: FrontEndHarness.name("peer.local."), ttl: 120, data: .a(IPv4Address(10, 0, 0, 9))),
                FrontEndHarness.link), to: query)
        let found = try #require(harness.signals.last)
        #expect(found.path == path && found.member == "Found")
        #expect(
            found.arguments == [
                .int32(2), .int32(0), .string("My Web"), .string("_http._tcp"), .string("local"),
                .string("peer.local"), .int32(0), .string("10.0.0.9"), .uint16(8080),
                // Last string first, as avahi-daemon gives them.
                .byteArrays([Array("flag".utf8), Array("path=/".utf8), Array("k=v".utf8)]), .uint32(4),
            ])
    }

    @Test func resolveServiceAnswersLater() throws {
        let harness = FrontEndHarness()
        let result = harness.call(
            "ResolveService",
            [.int32(-1), .int32(-1), .string("Gone"), .string("_http._tcp"), .string(""), .int32(-1), .uint32(0)])
        #expect(result == .later)
        harness.advance(by: AvahiFrontEnd.resolveTimeout)
        #expect(harness.frontEnd.takeDeferredReplies() == [AvahiDeferredReply(call: 1, result: .error(.timeout))])
        #expect(harness.signals.isEmpty)
        #expect(harness.frontEnd.objectCount == 0)
    }

    @Test func anEntryGroupCommitsRegistersAndCollides() throws {
        let harness = FrontEndHarness()
        let path = try #require(FrontEndHarness.path(harness.call("EntryGroupNew")))
        let group = AvahiInterfaceSpec.entryGroupName
        #expect(harness.call("IsEmpty", path: path, interface: group) == .reply([.boolean(true)]))
        let key: [DBusValue] = [.int32(-1), .int32(-1), .uint32(0), .string("Pub"), .string("_http._tcp"), .string("")]
        #expect(
            harness.call(
                "AddService", key + [.string(""), .uint16(8080), .byteArrays([Array("a=1".utf8)])], path: path,
                interface: group) == .reply([]))
        #expect(
            harness.call("AddServiceSubtype", key + [.string("_printer._sub._http._tcp")], path: path, interface: group)
                == .reply([]))
        #expect(
            harness.call("AddServiceSubtype", key + [.string("_x._sub._ipp._tcp")], path: path, interface: group)
                == .error(.invalidServiceSubtype))
        #expect(harness.commands.isEmpty)
        #expect(harness.call("Commit", path: path, interface: group) == .reply([]))
        #expect(harness.signals.map(\.arguments) == [[.int32(1), .string("org.freedesktop.Avahi.Success")]])
        guard case .register(let id, let registration) = harness.commands.first else {
            Issue.record("no registration: \(harness.commands)")
            return
        }
        #expect(registration.instance == "Pub")
        #expect(registration.subtypes == ["_printer"])
        #expect(registration.port == 8080)
        #expect(!registration.autoRename)
        #expect(registration.txt.rdata == [3] + Array("a=1".utf8))
        harness.deliver(.registered(FrontEndHarness.name("Pub._http._tcp.local.")), to: id)
        #expect(harness.signals.last?.arguments == [.int32(2), .string("org.freedesktop.Avahi.Success")])
        #expect(harness.call("GetState", path: path, interface: group) == .reply([.int32(2)]))
        #expect(harness.call("Commit", path: path, interface: group) == .error(.badState))
        harness.deliver(.registrationFailed(.nameConflict), to: id)
        #expect(harness.signals.last?.arguments == [.int32(3), .string("org.freedesktop.Avahi.CollisionError")])
        #expect(harness.commands.last == .cancel(id))
        // The group is empty again, as Avahi leaves it: the client adds its service under a new name and commits.
        #expect(harness.call("IsEmpty", path: path, interface: group) == .reply([.boolean(true)]))
        harness.call(
            "AddService",
            [.int32(-1), .int32(-1), .uint32(0), .string("Pub #2"), .string("_http._tcp"), .string("")]
                + [.string(""), .uint16(8080), .byteArrays([])], path: path, interface: group)
        #expect(harness.call("Commit", path: path, interface: group) == .reply([]))
        guard case .register(_, let renamed) = harness.commands.last else {
            Issue.record("no new registration: \(harness.commands)")
            return
        }
        #expect(renamed.instance == "Pub #2")
        #expect(harness.call("Reset", path: path, interface: group) == .reply([]))
        #expect(harness.signals.last?.arguments == [.int32(0), .string("org.freedesktop.Avahi.Success")])
    }

    @Test func aRefusedCommitFailsTheGroupToo() throws {
        let harness = FrontEndHarness()
        harness.gate.decision = .refuse(reason: "unregistered", explanation: "unregistered")
        let path = try #require(FrontEndHarness.path(harness.call("EntryGroupNew")))
        let group = AvahiInterfaceSpec.entryGroupName
        harness.call(
            "AddService",
            [
                .int32(-1), .int32(-1), .uint32(0), .string("Pub"), .string("_http._tcp"), .string(""), .string(""),
                .uint16(1), .byteArrays([]),
            ], path: path, interface: group)
        #expect(harness.call("Commit", path: path, interface: group) == .error(.notPermitted))
        #expect(harness.signals.last?.arguments == [.int32(4), .string("org.freedesktop.Avahi.NotPermittedError")])
        #expect(harness.commands.isEmpty)
    }

    @Test func aClientLeavingTakesItsObjects() throws {
        let harness = FrontEndHarness()
        _ = harness.call("ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])
        let id = try #require(harness.lastBrowse())
        harness.frontEnd.clientGone(FrontEndHarness.client)
        harness.collect()
        #expect(harness.commands.last == .cancel(id))
        #expect(harness.frontEnd.objectCount == 0)
        #expect(harness.frontEnd.clientCount == 0)
    }

    @Test func anAddressResolverAsksTheReverseNameAndFindsTheHost() throws {
        let harness = FrontEndHarness()
        let result = harness.call("ResolveAddress", [.int32(-1), .int32(-1), .string("10.0.0.9"), .uint32(0)])
        #expect(result == .later)
        guard case .query(let id, let name, let type, nil, _) = harness.commands.first else {
            Issue.record("no query: \(harness.commands)")
            return
        }
        #expect(name == FrontEndHarness.name("9.0.0.10.in-addr.arpa."))
        #expect(type == .ptr)
        harness.deliver(
            .recordAdded(
                ResourceRecord(name: name, ttl: 120, data: .ptr(FrontEndHarness.name("peer.local."))),
                FrontEndHarness.link), to: id)
        #expect(
            harness.frontEnd.takeDeferredReplies() == [
                AvahiDeferredReply(
                    call: 1,
                    result: .reply([
                        .int32(2), .int32(0), .int32(0), .string("10.0.0.9"), .string("peer.local"), .uint32(4),
                    ]))
            ])
        #expect(harness.commands.last == .cancel(id))
        #expect(
            harness.call("ResolveAddress", [.int32(-1), .int32(-1), .string("not-an-address"), .uint32(0)])
                == .error(.invalidAddress))
    }

    @Test func aRecordBrowserReportsRecordsWithTheirData() throws {
        let harness = FrontEndHarness()
        let path = try #require(
            FrontEndHarness.path(
                harness.call(
                    "RecordBrowserNew",
                    [.int32(-1), .int32(-1), .string("peer.local"), .uint16(1), .uint16(1), .uint32(0)])))
        guard case .query(let id, _, .a, nil, _) = harness.commands.first else {
            Issue.record("no query: \(harness.commands)")
            return
        }
        harness.deliver(
            .recordAdded(
                ResourceRecord(
                    name: FrontEndHarness.name("peer.local."), ttl: 120, data: .a(IPv4Address(10, 0, 0, 9))),
                FrontEndHarness.link), to: id)
        #expect(
            harness.signals == [
                AvahiSignal(
                    destination: FrontEndHarness.client, path: path, interface: AvahiInterfaceSpec.recordBrowserName,
                    member: "ItemNew",
                    arguments: [
                        .int32(2), .int32(0), .string("peer.local"), .uint16(1), .uint16(1), .bytes([10, 0, 0, 9]),
                        .uint32(4),
                    ])
            ])
    }

    @Test func addAddressPublishesTheAddressAndItsReverseName() throws {
        let harness = FrontEndHarness()
        let path = try #require(FrontEndHarness.path(harness.call("EntryGroupNew")))
        let group = AvahiInterfaceSpec.entryGroupName
        #expect(
            harness.call(
                "AddAddress", [.int32(-1), .int32(-1), .uint32(0), .string("printer.local"), .string("10.0.0.7")],
                path: path, interface: group) == .reply([]))
        #expect(
            harness.call(
                "AddAddress", [.int32(-1), .int32(-1), .uint32(0), .string("printer.example"), .string("10.0.0.7")],
                path: path, interface: group) == .error(.invalidHostName))
        #expect(harness.call("Commit", path: path, interface: group) == .reply([]))
        let records = harness.commands.compactMap { command -> (OperationID, RecordRegistration)? in
            if case .registerRecord(let id, let registration) = command { (id, registration) } else { nil }
        }
        #expect(
            records.map(\.1.name) == [
                FrontEndHarness.name("printer.local."), FrontEndHarness.name("7.0.0.10.in-addr.arpa."),
            ])
        #expect(records.map(\.1.type) == [.a, .ptr])
        #expect(records.allSatisfy { $0.1.unique })
        harness.deliver(.registered(FrontEndHarness.name("printer.local.")), to: records[0].0)
        #expect(harness.signals.last?.arguments == [.int32(1), .string("org.freedesktop.Avahi.Success")])
        harness.deliver(.registered(FrontEndHarness.name("7.0.0.10.in-addr.arpa.")), to: records[1].0)
        #expect(harness.signals.last?.arguments == [.int32(2), .string("org.freedesktop.Avahi.Success")])
        #expect(harness.call("Free", path: path, interface: group) == .reply([]))
        #expect(Set(harness.commands.suffix(2)) == [.cancel(records[0].0), .cancel(records[1].0)])
    }

    @Test func aClientWhoseProgramEndedLosesItsOperations() throws {
        let harness = FrontEndHarness()
        let path = try #require(
            FrontEndHarness.path(
                harness.call(
                    "ServiceBrowserNew", [.int32(-1), .int32(-1), .string("_http._tcp"), .string(""), .uint32(0)])))
        let id = try #require(harness.lastBrowse())
        #expect(harness.frontEnd.hasOperations(FrontEndHarness.client))
        harness.frontEnd.endProgram(of: FrontEndHarness.client, reason: "pid 4242 started another program")
        harness.collect()
        #expect(harness.commands.last == .cancel(id))
        #expect(
            harness.signals.last
                == AvahiSignal(
                    destination: FrontEndHarness.client, path: path,
                    interface: AvahiInterfaceSpec.serviceBrowserName, member: "Failure",
                    arguments: [.string("org.freedesktop.Avahi.NotPermittedError")]))
        #expect(!harness.frontEnd.hasOperations(FrontEndHarness.client))
    }

    @Test func aHostRenameIsTheServerRegisteringThenRunningForEveryone() {
        let harness = FrontEndHarness()
        harness.frontEnd.hostRenamed()
        harness.collect()
        #expect(harness.signals.map(\.destination) == ["", ""])
        #expect(harness.signals.map(\.path) == ["/", "/"])
        #expect(
            harness.signals.map(\.arguments) == [
                [.int32(1), .string("org.freedesktop.Avahi.Success")],
                [.int32(2), .string("org.freedesktop.Avahi.Success")],
            ])
    }

    @Test func updateServiceTxtReplacesThePublishedRecord() throws {
        let harness = FrontEndHarness()
        let path = try #require(FrontEndHarness.path(harness.call("EntryGroupNew")))
        let group = AvahiInterfaceSpec.entryGroupName
        let key: [DBusValue] = [.int32(-1), .int32(-1), .uint32(0), .string("Pub"), .string("_http._tcp"), .string("")]
        harness.call(
            "AddService", key + [.string(""), .uint16(80), .byteArrays([Array("v=1".utf8)])], path: path,
            interface: group)
        harness.call("Commit", path: path, interface: group)
        guard case .register(let id, _) = harness.commands.first else {
            Issue.record("no registration: \(harness.commands)")
            return
        }
        #expect(
            harness.call("UpdateServiceTxt", key + [.byteArrays([Array("v=2".utf8)])], path: path, interface: group)
                == .reply([]))
        #expect(harness.commands.last == .updateTXT(id, try TXTRecord(strings: [Array("v=2".utf8)])))
        let other: [DBusValue] = [
            .int32(-1), .int32(-1), .uint32(0), .string("Other"), .string("_http._tcp"), .string(""),
        ]
        #expect(
            harness.call("UpdateServiceTxt", other + [.byteArrays([])], path: path, interface: group)
                == .error(.invalidObject))
    }

    @Test func aDomainBrowserAsksRFC6763sNamesAndReportsDomains() throws {
        let harness = FrontEndHarness()
        let path = try #require(
            FrontEndHarness.path(
                harness.call("DomainBrowserNew", [.int32(-1), .int32(-1), .string(""), .int32(0), .uint32(0)])))
        guard case .query(let id, let name, .ptr, nil, _) = harness.commands.first else {
            Issue.record("no query: \(harness.commands)")
            return
        }
        #expect(name == FrontEndHarness.name("b._dns-sd._udp.local."))
        harness.deliver(
            .recordAdded(
                ResourceRecord(name: name, ttl: 120, data: .ptr(FrontEndHarness.name("example.local."))),
                FrontEndHarness.link), to: id)
        #expect(
            harness.signals.last
                == AvahiSignal(
                    destination: FrontEndHarness.client, path: path, interface: AvahiInterfaceSpec.domainBrowserName,
                    member: "ItemNew", arguments: [.int32(2), .int32(0), .string("example.local"), .uint32(4)]))
        #expect(
            harness.call("DomainBrowserNew", [.int32(-1), .int32(-1), .string(""), .int32(9), .uint32(0)])
                == .error(.invalidArgument))
    }

    @Test func resolveHostNameAnswersWithTheFirstAddress() throws {
        let harness = FrontEndHarness()
        let result = harness.call(
            "ResolveHostName", [.int32(-1), .int32(-1), .string("peer.local"), .int32(1), .uint32(0)])
        #expect(result == .later)
        let queries = harness.commands.compactMap { command -> (OperationID, RecordType)? in
            if case .query(let id, _, let type, _, _) = command { (id, type) } else { nil }
        }
        // aprotocol 1 (IPv6): the AAAA record only.
        #expect(queries.map(\.1) == [.aaaa])
        let id = try #require(queries.first?.0)
        let address = try #require(IPv6Address("fe80::9"))
        harness.deliver(
            .recordAdded(
                ResourceRecord(name: FrontEndHarness.name("peer.local."), ttl: 120, data: .aaaa(address)),
                FrontEndHarness.link), to: id)
        #expect(
            harness.frontEnd.takeDeferredReplies() == [
                AvahiDeferredReply(
                    call: 1,
                    result: .reply([
                        .int32(2), .int32(0), .string("peer.local"), .int32(1), .string("fe80::9"), .uint32(4),
                    ]))
            ])
    }

    @Test func addRecordPublishesASharedOrUniqueRecord() throws {
        let harness = FrontEndHarness()
        let path = try #require(FrontEndHarness.path(harness.call("EntryGroupNew")))
        let group = AvahiInterfaceSpec.entryGroupName
        let txt: [UInt8] = [3] + Array("a=b".utf8)
        #expect(
            harness.call(
                "AddRecord",
                [
                    .int32(-1), .int32(-1), .uint32(0), .string("note.local"), .uint16(1), .uint16(16), .uint32(60),
                    .bytes(txt),
                ], path: path, interface: group) == .reply([]))
        #expect(
            harness.call(
                "AddRecord",
                [
                    .int32(-1), .int32(-1), .uint32(1), .string("note.local"), .uint16(3), .uint16(16), .uint32(60),
                    .bytes(txt),
                ], path: path, interface: group) == .error(.invalidArgument))
        #expect(harness.call("Commit", path: path, interface: group) == .reply([]))
        guard case .registerRecord(_, let registration) = harness.commands.first else {
            Issue.record("no record: \(harness.commands)")
            return
        }
        #expect(registration.name == FrontEndHarness.name("note.local."))
        #expect(registration.type == .txt)
        #expect(!registration.unique)
        #expect(registration.ttl == 60)
    }
}
