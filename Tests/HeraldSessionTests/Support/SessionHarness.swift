import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

@testable import HeraldSession

/// A permission layer for tests: each user's decision (allow unless told otherwise), the operators, and every
/// question asked, in order.
final class ScriptedGate: SessionGate {
    var decisions: [UInt32: AccessDecision] = [:]
    var operators: Set<UInt32> = []
    /// The user each connection's requests come from.
    var users: [ConnectionID: UInt32] = [:]
    var asked: [(request: PermissionRequest, uid: UInt32, isNew: Bool)] = []
    /// The callers judged again, one entry per ``decideAgain(_:for:)`` call, with how many requests each brought.
    var judgedAgain: [(caller: CallerIdentity, requests: Int)] = []
    /// How many times each connection's caller was asked for (``caller(of:)``).
    var callerQuestions: [ConnectionID: Int] = [:]

    func caller(of connection: ConnectionID) -> CallerIdentity {
        callerQuestions[connection, default: 0] += 1
        return CallerIdentity(pid: Int32(connection.rawValue + 1000), uid: users[connection] ?? UInt32.max)
    }

    func isOperator(_ caller: CallerIdentity) -> Bool { operators.contains(caller.uid) }

    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision {
        asked.append((request, caller.uid, isNew))
        return decisions[caller.uid] ?? .allow
    }

    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
        judgedAgain.append((caller, requests.count))
        return requests.map { decide($0, for: caller, isNew: false) }
    }

    static let parked = AccessDecision.park(reason: "not yet granted", explanation: "not-determined: ask an operator")
    static let refused = AccessDecision.refuse(reason: "denied", explanation: "denied: an operator denied it")
}

/// The session core wired to a real mDNS engine on one interface (IPv4 and IPv6 links) with a virtual clock, the
/// way the daemon's shell wires it to the network: engine commands are carried out, engine events go back to the
/// core. Peers' packets are injected as received datagrams.
final class SessionHarness {
    static let interface = 2
    static let ipv4 = LinkID(interfaceIndex: interface, family: .ipv4)
    static let ipv6 = LinkID(interfaceIndex: interface, family: .ipv6)
    static let peer = SocketAddress(.v4(IPv4Address(10, 0, 0, 9)), port: 5353)
    static let peer6 = SocketAddress(.v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 9)), port: 5353)

    let gate = ScriptedGate()
    let core: SessionCore
    var engine: MDNSEngine
    var now = Instant(milliseconds: 10_000)
    /// Every engine command the core asked for, in order.
    var commands: [EngineCommand] = []
    /// Every reply written so far, per connection, in order, with its MoreComing flag as sent.
    var replies: [ConnectionID: [(context: ClientContext, reply: Reply, moreComing: Bool)]] = [:]
    var log: [SessionLogLine] = []
    /// The family each of those replies named, in the same order (``SessionCore/reportsFamilies``).
    var families: [ConnectionID: [IPFamily?]] = [:]

    init(limits: SessionLimits = SessionLimits(), reportsFamilies: Bool = false) {
        core = SessionCore(limits: limits, gate: gate, reportsFamilies: reportsFamilies)
        engine = MDNSEngine(configuration: EngineConfiguration(hostName: "herald", seed: 7))
        engine.addLink(Self.ipv4, addresses: [LinkAddress(.v4(IPv4Address(10, 0, 0, 1)), prefixLength: 24)], at: now)
        engine.addLink(
            Self.ipv6,
            addresses: [
                LinkAddress(
                    .v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 1)),
                    prefixLength: 64)
            ], at: now)
        _ = engine.takeActions()
    }

    /// Opens connection `id` of `user`.
    @discardableResult
    func connect(_ id: Int, user: UInt32, isOperator: Bool = false) -> Bool {
        gate.users[ConnectionID(id)] = user
        let opened = core.open(
            ConnectionID(id), user: user, pid: Int32(id + 1000), startTime: UInt64(id),
            isOperator: isOperator)
        pump()
        return opened
    }

    /// Sends a request on connection `id` (a shared connection's request: its status goes on a passed socket), and
    /// carries out what the core asks; returns the status.
    @discardableResult
    func request(_ id: Int, _ context: UInt64, _ request: Request) -> DNSServiceError? {
        let header = IPCHeader(
            dataLength: 0, operation: request.operation.rawValue,
            context: ClientContext(rawValue: context))
        let outcome = core.handle(
            DecodedRequest(header: header, request: request, statusReturn: .passedSocket),
            on: ConnectionID(id), at: now.milliseconds)
        pump()
        if case .status(let status, _) = outcome { return status }
        return nil
    }

    func browse(_ id: Int, _ context: UInt64, _ type: String, interface: UInt32 = 0) -> DNSServiceError? {
        request(id, context, .browse(BrowseRequest(interfaceIndex: interface, regtype: type)))
    }

    func cancel(_ id: Int, _ context: UInt64) {
        request(id, context, .cancel(CancelRequest()))
    }

    /// A peer's datagram arriving on `link`.
    func receive(_ records: [ResourceRecord], on link: LinkID = SessionHarness.ipv4) {
        let message = DNSMessage(flags: DNSFlags(rawValue: 0x8400), answers: records)
        let source = link.family == .ipv4 ? Self.peer : Self.peer6
        engine.receive(try! message.serialized(), from: source, on: link, at: now)
        pump()
    }

    /// Lets `milliseconds` of virtual time pass, running the engine's and the core's timers on the way.
    func run(for milliseconds: Int64) {
        let end = now.milliseconds + milliseconds
        while true {
            let next = [engine.nextDeadline?.milliseconds, core.nextDeadline].compactMap { $0 }.filter { $0 <= end }
                .min()
            guard let next else { break }
            now = Instant(milliseconds: max(next, now.milliseconds))
            engine.advance(to: now)
            core.advance(to: now.milliseconds)
            pump()
        }
        now = Instant(milliseconds: end)
    }

    /// Carries out the core's engine commands and hands the engine's events back, then collects the replies, as the
    /// daemon's shell does after each input.
    func pump() {
        while true {
            let batch = core.takeEngineCommands()
            for command in batch { command.apply(to: &engine, at: now) }
            commands += batch
            for action in engine.takeActions() {
                if case .deliver(let operation, let event) = action { core.receive(event, for: operation) }
            }
            if !core.hasOutput { break }
            let replies = core.takeReplies()
            for entry in replies.entries {
                self.replies[entry.connection, default: []].append(
                    (entry.context, replies.bodies[entry.body], entry.moreComing))
                families[entry.connection, default: []].append(entry.family)
            }
        }
        log += core.takeLog()
    }

    /// The replies connection `id` got since the last call, as (context, reply).
    func take(_ id: Int) -> [(context: ClientContext, reply: Reply, moreComing: Bool)] {
        defer { replies[ConnectionID(id)] = [] }
        return replies[ConnectionID(id)] ?? []
    }

    /// The browse replies connection `id` got since the last call, as "+Name@interface" / "-Name@interface".
    func browseResults(_ id: Int) -> [String] {
        take(id).compactMap { entry in
            guard case .browse(let reply) = entry.reply else { return nil }
            if reply.error != .noError { return "error \(reply.error)" }
            return "\(reply.flags.contains(.add) ? "+" : "-")\(reply.name)@\(reply.interfaceIndex)"
        }
    }

    /// The browse replies connection `id` got since the last call, as "+Name@interface family".
    func browseResultsWithFamilies(_ id: Int) -> [String] {
        let named = families[ConnectionID(id)] ?? []
        families[ConnectionID(id)] = []
        return zip(take(id), named).compactMap { entry, family in
            guard case .browse(let reply) = entry.reply, reply.error == .noError else { return nil }
            let sign = reply.flags.contains(.add) ? "+" : "-"
            return "\(sign)\(reply.name)@\(reply.interfaceIndex) \(family?.rawValue ?? "none")"
        }
    }

    /// Engine commands asked for since the last call.
    func takeCommands() -> [EngineCommand] {
        defer { commands = [] }
        return commands
    }
}

extension DNSName {
    /// `<label>.<self>`, for instance names in tests.
    func instance(_ label: String) -> DNSName { try! prepending(label: label) }
}
