import CHeraldSystem
import HeraldAvahi
import HeraldBroker
import HeraldEngine
import HeraldSession
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Serves Avahi's D-Bus API (`org.freedesktop.Avahi` on the system bus, docs/dbus-api.md): the shell around
/// ``AvahiFrontEnd``. It reads calls off the ``SystemBus``, identifies each caller once by the bus's credentials and
/// `/proc` (as the app socket does its connections), hands the calls to the front end, and writes the answers and
/// signals it gives; it carries out the sessions' engine commands and hands engine events back.
final class AvahiDBusServer {
    static let busName = "org.freedesktop.Avahi"

    /// The bus connection; nil while the bus is away (heraldd connects when it comes, or comes back).
    private(set) var bus: SystemBus?
    /// A connection that broke, kept until the loop is out of its handlers.
    private var brokenBus: SystemBus?
    let setting: DaemonConfiguration.DBusSetting
    let loop: EventLoop
    let frontEnd: AvahiFrontEnd
    let network: NetworkService
    let gate: AccessGate
    let logger: Logger
    private let sessionGate: AvahiSessionGate
    private let host: AvahiDaemonHost
    /// Ends the front end's waits (`AllForNow`, resolver timeouts).
    private var timer: LoopTimer?
    /// Calls answered later, by the token the front end was given.
    private var waitingCalls: [Int: SystemBus.Call] = [:]
    private var nextToken = 1
    /// Calls of clients whose program is still being identified (a pinned executable being hashed).
    private var heldCalls: [String: [SystemBus.Call]] = [:]
    /// True while another daemon owns the name and heraldd waits in the bus's queue for it.
    private(set) var waitingForName = false
    /// True while ``flush()`` runs.
    private var flushing = false
    /// Checks, while clients have operations, that each still runs the program it called with.
    private var sweepTimer: LoopTimer?
    static let sweepMilliseconds: Int64 = 1000
    /// Tries the bus again while it is away.
    private var reconnectTimer: LoopTimer?
    private var retry = BusRetry()
    /// True once the log said that the API is off, until it is served again: one line per change, not per attempt.
    private var saidOff = false

    /// Who is behind each client, fixed at its first call.
    final class Caller {
        let identity: ClientIdentity
        var program: ConnectingProgram?
        var notedCaller = false
        /// Set once the process no longer runs the program it called with: it serves as no app from then on.
        var programEnded = false {
            didSet { judged = nil }
        }
        /// The last judgement of this caller and when it was made: calls within one sweep period share it.
        var judged: (identity: CallerIdentity, atMilliseconds: Int64)?
        init(identity: ClientIdentity) { self.identity = identity }
        deinit { if let pidfd = identity.pidfd { close(pidfd) } }
    }
    var callers: [ConnectionID: Caller] = [:]
    private var callerOfSender: [String: Caller] = [:]

    /// Serves the API as `setting` says: nil (said once in the log) when it is `no`. With `auto` a bus that is not
    /// there yet is connected to when it comes; with `yes` heraldd does not start without the bus and the name.
    /// Either way, a bus that goes away later is connected to again when it is back.
    static func start(
        setting: DaemonConfiguration.DBusSetting, loop: EventLoop, network: NetworkService, gate: AccessGate,
        limits: SessionLimits, nssAvailable: Bool, logger: Logger
    ) throws(SystemError) -> AvahiDBusServer? {
        guard setting != .no else {
            logger.info("D-Bus API off: [dbus] enabled = no")
            return nil
        }
        let server = try AvahiDBusServer(
            setting: setting, loop: loop, network: network, gate: gate, limits: limits, nssAvailable: nssAvailable,
            logger: logger)
        if let refused = server.connect(atStart: true), setting == .yes {
            server.stop()
            throw refused
        }
        return server
    }

    private init(
        setting: DaemonConfiguration.DBusSetting, loop: EventLoop, network: NetworkService, gate: AccessGate,
        limits: SessionLimits, nssAvailable: Bool, logger: Logger
    ) throws(SystemError) {
        self.setting = setting
        self.loop = loop
        self.network = network
        self.gate = gate
        self.logger = logger
        sessionGate = AvahiSessionGate(gate: gate, logger: logger)
        host = AvahiDaemonHost(network: network, nssAvailable: nssAvailable)
        // A resolver is two operations of the sessions (the service, then its host's address): a client may hold
        // as many objects as Avahi lets it (1024) whatever they are, within its user's share of operations.
        var limits = limits
        limits.operationsPerConnection *= 2
        let core = SessionCore(
            limits: limits, messageSizeLimit: network.engine.configuration.messageSizeLimit, gate: sessionGate,
            owner: .avahiSessions, reportsFamilies: true)
        frontEnd = AvahiFrontEnd(core: core, host: host)
        sessionGate.server = self
        timer = try LoopTimer(loop: loop) { [unowned self] in
            self.frontEnd.advance(to: MonotonicClock.milliseconds())
            self.flush()
        }
        sweepTimer = try LoopTimer(loop: loop) { [unowned self] in self.sweep() }
        reconnectTimer = try LoopTimer(loop: loop) { [unowned self] in
            self.brokenBus = nil
            // An attempt that finds no bus again is no work: it must not keep the loop from looking idle.
            if self.connect(atStart: false) != nil { self.loop.discountCurrentEvent() }
        }
        network.router.register(self, for: .avahiSessions)
    }

    /// Connects to the system bus and asks for the name; when either fails, tries again later (``BusRetry``) and
    /// returns why. At start with `yes`, the name must be had at once; otherwise heraldd waits in the bus's queue
    /// for a name another daemon (avahi-daemon) holds, and serves it once that one lets it go.
    @discardableResult
    private func connect(atStart: Bool) -> SystemError? {
        // With `yes`, heraldd does not start without the bus and the name: nothing is tried again then.
        let strict = atStart && setting == .yes
        let bus: SystemBus
        do {
            bus = try SystemBus(loop: loop)
        } catch {
            if !strict { off("no system bus (\(error))") }
            return error
        }
        let request = bus.requestName(Self.busName, queue: !strict)
        if case .failed(let refused) = request {
            bus.close()
            if !strict { off("cannot own \(Self.busName) (\(refused))") }
            return refused
        }
        if case .queued = request, strict {
            bus.close()
            return SystemError("RequestName(\(Self.busName)): another daemon owns it", code: EEXIST)
        }
        self.bus = bus
        retry.reset()
        saidOff = false
        bus.onCall = { [unowned self] call in self.receive(call) }
        bus.onNameLost = { [unowned self] name in self.clientGone(name) }
        bus.onNameAcquired = { [unowned self] name in
            guard name == Self.busName, self.waitingForName else { return }
            self.waitingForName = false
            self.logger.info("D-Bus API: serving \(name) on the system bus as \(self.bus?.uniqueName ?? "?")")
        }
        bus.onClosed = { [unowned self] in self.busWentAway() }
        if case .queued = request {
            waitingForName = true
            let text =
                "D-Bus API waiting: another daemon (avahi-daemon?) owns \(Self.busName); heraldd serves it once that "
                + "one lets it go"
            logger.notice("\(text)")
        } else {
            waitingForName = false
            logger.info("D-Bus API: serving \(Self.busName) on the system bus as \(bus.uniqueName)")
        }
        // What arrived while the name was asked for (the bus's NameAcquired, early calls) waits in sd-bus's queue,
        // not on the descriptor.
        bus.process()
        return nil
    }

    /// The API is off for now: said once (until it is served again), and the bus is tried again later.
    private func off(_ reason: String) {
        if !saidOff {
            saidOff = true
            let text = "D-Bus API off: \(reason); trying again every \(BusRetry.longestDelay / 1000) s at most"
            if setting == .yes { logger.warning("\(text)") } else { logger.notice("\(text)") }
        }
        reconnectTimer?.schedule(at: MonotonicClock.milliseconds() + retry.nextDelay())
    }

    /// The bus connection broke (the bus daemon stopped or restarted): every client's session ends as if it had
    /// left the bus (entry groups withdrawn with goodbyes), and the bus is tried again until it is back.
    private func busWentAway() {
        let clients = callerOfSender.count
        brokenBus = bus
        bus = nil
        waitingForName = false
        waitingCalls.removeAll()
        heldCalls.removeAll()
        for name in callerOfSender.keys.sorted() { clientGone(name) }
        retry.reset()
        saidOff = false
        off("the system bus connection broke, \(clients) clients dropped")
    }

    /// Stops serving: the bus connection is closed and not tried again.
    private func stop() {
        reconnectTimer?.schedule(at: nil)
        bus?.close()
        bus = nil
    }

    /// The clients on the bus, and their objects.
    var clientCount: Int { frontEnd.clientCount }

    // MARK: - Calls

    private func receive(_ call: SystemBus.Call) {
        if heldCalls[call.sender] != nil {
            heldCalls[call.sender]?.append(call)
            return
        }
        if frontEnd.isClient(call.sender) {
            handle(call)
            return
        }
        guard let bus else { return }
        guard let credentials = bus.credentials(of: call.sender), credentials.pid > 0 else {
            bus.reply(to: call, error: AvahiError.failure.name, message: "the bus did not say who is calling")
            return
        }
        let pidfd = herald_pidfd_open(credentials.pid)
        var identity = ClientIdentity(
            pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, pidfd: pidfd >= 0 ? pidfd : nil)
        if let started = try? ProcessInspector.system.startTime(of: credentials.pid), identity.processIsAlive {
            identity.startTime = started
        }
        let caller = Caller(identity: identity)
        let isOperator = gate.isOperator(
            CallerIdentity(pid: credentials.pid, uid: credentials.uid, groups: [credentials.gid]))
        guard
            let id = frontEnd.admit(
                call.sender, user: credentials.uid, pid: credentials.pid, startTime: identity.startTime,
                isOperator: isOperator)
        else {
            writeLog()
            bus.reply(to: call, error: AvahiError.tooManyClients.name, message: AvahiError.tooManyClients.message)
            return
        }
        callers[id] = caller
        callerOfSender[call.sender] = caller
        heldCalls[call.sender] = [call]
        // Calls are judged against the program the caller ran at its first call, once it is identified.
        gate.identifyConnection(identity) { [weak self, weak caller] program in
            guard let self, let caller, self.callerOfSender[call.sender] === caller else { return }
            caller.program = program
            let held = self.heldCalls.removeValue(forKey: call.sender) ?? []
            for waiting in held { self.handle(waiting) }
        }
    }

    private func handle(_ call: SystemBus.Call) {
        guard let bus else { return }
        guard let arguments = call.arguments else {
            bus.reply(to: call, error: AvahiError.invalidArguments.name, message: AvahiError.invalidArguments.message)
            return
        }
        let token = nextToken
        nextToken += 1
        let result = frontEnd.handle(
            AvahiCall(
                sender: call.sender, path: call.path, interface: call.interface, member: call.member,
                arguments: arguments),
            token: token, at: MonotonicClock.milliseconds())
        // The answer goes before any signal the call gave rise to, so that the client knows the object first.
        switch result {
        case .reply(let values): bus.reply(to: call, values)
        case .error(let error): bus.reply(to: call, error: error.name, message: error.message)
        case .later: waitingCalls[token] = call
        }
        for request in frontEnd.takeHostLabelRequests() {
            let who = callerOfSender[request.client].map { "uid \($0.identity.uid) (pid \($0.identity.pid))" }
            network.setHostName(request.label, requester: "\(who ?? request.client) over D-Bus")
        }
        flush()
        if frontEnd.hasOperations(call.sender) { scheduleSweep() }
    }

    private func clientGone(_ sender: String) {
        heldCalls[sender] = nil
        // Its calls waiting for a late answer get none: nobody is there to read it.
        waitingCalls = waitingCalls.filter { $0.value.sender != sender }
        guard let caller = callerOfSender.removeValue(forKey: sender) else { return }
        if let id = frontEnd.connection(of: sender), callers[id] === caller { callers[id] = nil }
        frontEnd.clientGone(sender)
        flush()
    }

    /// Ends the operations of clients whose process started another program (or exited without its bus
    /// connection closing, as when a child holds it), as the app socket's sweep does for its connections.
    private func sweep() {
        var busy = false
        for (sender, caller) in callerOfSender.sorted(by: { $0.key < $1.key }) where frontEnd.hasOperations(sender) {
            busy = true
            guard !caller.programEnded, let program = caller.program else { continue }
            guard !gate.stillRuns(program, peer: caller.identity) else { continue }
            caller.programEnded = true
            frontEnd.endProgram(
                of: sender, reason: "pid \(caller.identity.pid), which called, has exited or started another program")
        }
        flush()
        if busy { sweepTimer?.schedule(at: MonotonicClock.milliseconds() + Self.sweepMilliseconds) }
    }

    /// Keeps the sweep going while any client has operations.
    private func scheduleSweep() {
        if sweepTimer?.deadline == nil {
            sweepTimer?.schedule(at: MonotonicClock.milliseconds() + Self.sweepMilliseconds)
        }
    }

    /// The host's name changed: clients hear that the server registers and runs again.
    func hostRenamed() {
        frontEnd.hostRenamed()
        flush()
    }

    /// Re-judges every client's operations after a grant, a deny or a reset.
    func accessChanged() {
        frontEnd.accessChanged()
        flush()
    }

    // MARK: - Carrying out what the front end asks

    /// Runs the engine commands, then sends the late answers and signals, until nothing is left. The engine's
    /// events of those commands come back while they run (``engineBatchEnded()``): they are taken by the loop
    /// here, not by a flush of their own.
    func flush() {
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        while true {
            let commands = frontEnd.takeEngineCommands()
            if !commands.isEmpty {
                network.perform { engine, now in
                    for command in commands { command.apply(to: &engine, at: now) }
                }
            }
            frontEnd.flush()
            for reply in frontEnd.takeDeferredReplies() {
                guard let call = waitingCalls.removeValue(forKey: reply.call), let bus else { continue }
                switch reply.result {
                case .reply(let values): bus.reply(to: call, values)
                case .error(let error): bus.reply(to: call, error: error.name, message: error.message)
                case .later: break
                }
            }
            for signal in frontEnd.takeSignals() {
                bus?.signal(
                    destination: signal.destination, path: signal.path, interface: signal.interface,
                    member: signal.member, arguments: signal.arguments)
            }
            writeLog()
            if !frontEnd.hasOutput { break }
        }
        if timer?.deadline != frontEnd.nextDeadline { timer?.schedule(at: frontEnd.nextDeadline) }
    }

    private func writeLog() {
        for line in frontEnd.takeLog() {
            // The sessions name their front end as the app socket; these lines are the D-Bus API's.
            let own =
                line.text.hasPrefix("app socket: ") ? String(line.text.dropFirst("app socket: ".count)) : line.text
            let text = "D-Bus API: \(own)"
            switch line.level {
            case .info: logger.info("\(text)")
            case .notice: logger.notice("\(text)")
            case .warning: logger.warning("\(text)")
            }
        }
    }
}

extension AvahiDBusServer: EngineEventReceiver {
    func receive(_ event: OperationEvent, for operation: OperationID) { frontEnd.receive(event, for: operation) }
    func engineBatchEnded() { flush() }
}

/// The sessions' questions about D-Bus callers, answered from what the bus said of them and the ``AccessGate``.
final class AvahiSessionGate: SessionGate {
    let gate: AccessGate
    let logger: Logger
    weak var server: AvahiDBusServer?

    init(gate: AccessGate, logger: Logger) {
        self.gate = gate
        self.logger = logger
    }

    /// The caller: the process behind the bus connection, as the bus daemon vouched for it, judged as the program
    /// it ran at its first call while it still runs it.
    ///
    /// The judgement is kept for one sweep period (``AvahiDBusServer/sweepMilliseconds``): the bus connection cannot
    /// change hands, and the sweep notices a program change within that period anyway, so a client's many calls (a
    /// resolver is two operations) do not each read `/proc` again.
    func caller(of connection: ConnectionID) -> CallerIdentity {
        guard let caller = server?.callers[connection] else { return CallerIdentity(pid: nil, uid: UInt32.max) }
        let now = MonotonicClock.milliseconds()
        if let judged = caller.judged, now - judged.atMilliseconds < AvahiDBusServer.sweepMilliseconds {
            return judged.identity
        }
        let peer = caller.identity
        let sender = UnixSocket.Sender(pid: peer.pid, uid: peer.uid, gid: peer.gid, pidfd: nil)
        let (identity, note) = gate.caller(
            of: peer, connection: caller.programEnded ? nil : caller.program, sender: sender)
        if let note, !caller.notedCaller {
            caller.notedCaller = true
            logger.notice("D-Bus API: client pid \(peer.pid): judged as no app: \(note)")
        }
        caller.judged = (identity, now)
        return identity
    }

    func isOperator(_ caller: CallerIdentity) -> Bool { gate.isOperator(caller) }

    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision {
        gate.decide(request, for: caller, isNew: isNew)
    }

    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
        gate.decideAgain(requests, for: caller)
    }
}

/// What Avahi's clients may ask about the host, from the engine and the kernel.
final class AvahiDaemonHost: AvahiHostFacts {
    let network: NetworkService
    let nssSupportAvailable: Bool
    let localServiceCookie: UInt32

    init(network: NetworkService, nssAvailable: Bool) {
        self.network = network
        nssSupportAvailable = nssAvailable
        var cookie: UInt32 = 0
        while cookie == 0 { cookie = UInt32.random(in: 1...UInt32.max) }
        localServiceCookie = cookie
    }

    var hostLabel: String { network.engine.hostLabel }

    func interfaceName(ofIndex index: Int32) -> String? {
        guard index > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(index), &buffer) != nil else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    func interfaceIndex(ofName name: String) -> Int32? {
        let index = if_nametoindex(name)
        return index == 0 ? nil : Int32(index)
    }
}
