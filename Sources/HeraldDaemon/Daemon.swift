import CHeraldSystem
import HeraldBroker
import HeraldControl
import HeraldEngine
import HeraldSession
import HeraldWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The system's host name without any domain part, as published under `.local`.
package func systemHostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count) == 0 else { return "linux" }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // The first label, cut to the 63 bytes a DNS label may hold (on a character boundary).
    var label = Substring(name.split(separator: ".").first ?? "")
    while label.utf8.count > 63 { label = label.dropLast() }
    return label.isEmpty ? "linux" : String(label)
}

/// The running daemon: the event loop, the network service, and signal handling.
package final class Daemon {
    private let loop: EventLoop
    private let signals: SignalSource
    package let network: NetworkService
    package let appSocket: AppSocketServer
    package let broker: PermissionBroker
    package let controlSocket: ControlSocketServer
    private let appsDirectory: AppsDirectory
    /// The libnss-mdns socket, when configured.
    package private(set) var nss: NSSServer?
    /// Avahi's D-Bus API on the system bus; nil while it is off (docs/dbus-api.md).
    private var avahi: AvahiDBusServer?
    private let staticServices: StaticServicePublisher
    /// The kernel rules of local-network access; nil when `enforcement = off`.
    package var enforcer: KernelEnforcer? { enforcement.enforcer }
    private let enforcement = EnforcerSlot()
    let startedAt: Int64
    private lazy var idlePages = IdlePages(startedAt: startedAt)
    private var heapTrim = HeapTrim()
    private let logger: Logger
    private var stopping = false
    /// Asked on SIGHUP: a message when the configuration file now says something else than the settings in use (which
    /// apply only at start), nil when it does not.
    package var configurationChanges: (() -> String?)?
    /// Keeps other daemons off this one's state directory while it runs.
    private let stateLock: StateDirectoryLock
    /// The service manager, when heraldd runs under systemd (Type=notify, watchdog).
    private let notifier = SystemdNotifier.fromProcessEnvironment(unsetEnvironment: true)
    private var nextWatchdog: Int64?
    /// What the loop had handled when it last looked, and whether a deadline did work since (for `IdlePages`).
    private var handledEventsSeen: UInt64 = 0
    private var deadlineWorked = false

    /// Opens the permission store and every socket. `port` is 5353 except in tests on an isolated network.
    package init(configuration: DaemonConfiguration, logger: Logger, port: UInt16 = HeraldWire.mdnsPort) throws {
        startedAt = MonotonicClock.milliseconds()
        self.logger = logger
        let descriptors = UnixSocket.raiseDescriptorLimit()
        let needed = configuration.clients + 256 + 64 + 64
        if descriptors > 0 && Int(descriptors) < needed {
            logger.warning(
                "only \(descriptors) open files are allowed (LimitNOFILE); \(configuration.clients) clients need about \(needed)"
            )
        }
        let operators = OperatorRule.resolving(groupName: configuration.operatorGroup)
        if operators.groupID == nil {
            logger.notice(
                "the operator group '\(configuration.operatorGroup)' does not exist: only root is an operator")
        }
        stateLock = try StateDirectoryLock(directory: configuration.stateDirectory)
        if let reason = stateLock.unavailable { logger.warning("\(reason)") }
        do {
            let store = try PermissionBroker.openStore(
                stateDirectory: configuration.stateDirectory,
                options: PermissionStore.Options(
                    auditLogLimit: configuration.auditLogLines,
                    pendingRequestLimit: configuration.pendingRequestLimit,
                    operatorLogLimit: configuration.operatorLogLines,
                    auditLinesPerUser: configuration.auditLinesPerUser,
                    pendingRequestsPerApp: configuration.pendingRequestsPerApp))
            StartupPages.release(after: "opening the permission store", logger: logger)
            broker = try PermissionBroker(
                store: store,
                policy: PermissionPolicy(
                    operatorRule: operators,
                    addressLookupsOpenToAllUsers: configuration.addressLookupsOpenToAllUsers),
                logger: logger)
        } catch {
            throw DaemonStartError("\(error)")
        }
        StartupPages.release(after: "checking the permission store", logger: logger)
        appsDirectory = AppsDirectory(path: configuration.appsDirectory)
        signals = try SignalSource()
        loop = try EventLoop()
        try broker.hashDigests(on: loop)
        var engine = EngineConfiguration(
            hostName: configuration.hostName ?? systemHostName(),
            seed: UInt64.random(in: 0...UInt64.max))
        engine.publishAddresses = configuration.publishAddresses
        engine.unicastFirstQueries = configuration.unicastFirstQueries
        engine.cacheLimitPerLink = configuration.cacheEntriesPerInterface
        engine.messageSizeLimit = MessageSizeLimit(datagramSize: configuration.maxMessageSize)
        var families: [IPFamily] = []
        if configuration.useIPv4 { families.append(.ipv4) }
        if configuration.useIPv6 { families.append(.ipv6) }
        network = try NetworkService(
            configuration: engine,
            policy: InterfacePolicy(allow: configuration.interfaces, deny: configuration.denyInterfaces),
            loop: loop, logger: logger, port: port, families: families,
            rateLimiter: SourceRateLimiter(
                rate: configuration.packetsPerSecondPerSource, burst: configuration.packetBurstPerSource))
        StartupPages.release(after: "opening the network sockets", logger: logger)
        var limits = ClientLimits()
        limits.sessions.connections = configuration.clients
        limits.sessions.connectionsPerUser = configuration.clientsPerUser
        limits.sessions.operatorReserve = min(32, configuration.clients / 8)
        limits.sessions.operationsPerConnection = configuration.operationsPerClient
        limits.sessions.operationsPerUser = configuration.operationsPerUser
        limits.outputBytesPerClient = configuration.clientReplyBuffer
        limits.idleMilliseconds = Int64(configuration.idleClientSeconds) * 1000
        // Socket activation: a listening socket named "dnssd" passed by systemd replaces binding our own. Every
        // other one of that name (a unit listening on mDNSResponder's path too) is served as well.
        let listenFDs = try? ListenFDs.fromProcessEnvironment(unsetEnvironment: true)
        let passedAppSockets = listenFDs?.descriptors(named: "dnssd") ?? []
        appSocket = try AppSocketServer(
            path: configuration.appSocket, inherited: passedAppSockets.first,
            loop: loop, network: network, gate: broker, limits: limits, logger: logger)
        for fd in passedAppSockets.dropFirst() {
            do {
                try appSocket.listen(alsoAt: "(a socket the service manager passed)", inherited: fd)
            } catch {
                logger.error("not serving the app protocol on another socket the service manager passed: \(error)")
            }
        }
        if let path = configuration.mdnsResponderSocket, !appSocket.serves(path) {
            do {
                try appSocket.listen(alsoAt: path)
            } catch {
                logger.error("not serving the app protocol on mDNSResponder's path \(path) as well: \(error)")
            }
        }
        if let path = configuration.nssSocket {
            do {
                nss = try NSSServer(path: path, loop: loop, network: network, gate: appSocket.gate, logger: logger)
            } catch {
                logger.error("not serving .local names to NSS on \(path): \(error)")
            }
        }
        avahi = try AvahiDBusServer.start(
            setting: configuration.dbus, loop: loop, network: network, gate: appSocket.gate, limits: limits.sessions,
            nssAvailable: nss != nil, logger: logger)
        staticServices = StaticServicePublisher(
            directories: configuration.servicesDirectories, network: network, logger: logger)
        let report = DaemonStatusReport(
            network: network, appSocket: appSocket, broker: broker,
            staticServices: staticServices, enforcement: enforcement, startedAt: startedAt)
        controlSocket = try ControlSocketServer(
            path: configuration.controlSocket, inherited: listenFDs?.descriptors(named: "control").first, loop: loop,
            broker: broker, operators: operators, logger: logger, status: { report.status() })
        try loop.register(signals.fd, for: .readable) { [unowned self] _ in self.handleSignals() }
        // Last of all: once the kernel rules are loaded, nothing may fail before run() (whose end removes them).
        let mode = EnforcementMode(rawValue: configuration.enforcement) ?? .off
        if mode != .off {
            do {
                enforcement.enforcer = try KernelEnforcer(
                    settings: KernelEnforcer.Settings(
                        mode: mode, failClosed: configuration.enforcementFailClosed,
                        exemptUnits: configuration.enforcementExemptUnits, operatorGroupID: operators.groupID,
                        marker: configuration.stateDirectory + "/enforcement-table"),
                    snapshot: broker.snapshot, loop: loop, logger: logger)
            } catch {
                throw DaemonStartError("enforcement = \(mode.rawValue) cannot be enforced: \(error)")
            }
        } else {
            KernelEnforcer.removeLeftovers(marker: configuration.stateDirectory + "/enforcement-table", logger: logger)
        }
        broker.onAccessChanged = { [unowned self] in
            self.appSocket.accessChanged()
            self.avahi?.accessChanged()
            self.enforcer?.update(self.broker.snapshot)
        }
        // Service names with %h (%H) follow the host name when a conflict changes it, as Avahi's do.
        network.onHostRenamed = { [unowned self] in
            self.staticServices.reload()
            self.avahi?.hostRenamed()
        }
        broker.onPendingRequests = { [unowned self] in self.controlSocket.notifyPending($0) }
        broker.onDecisionChanged = { [unowned self] in self.controlSocket.notifyDecision($0) }
        enforcer?.onBlocked = { [unowned self] in self.broker.recordBlocked(appID: $0) }
        controlSocket.blockedPackets = { [unowned self] in self.enforcer?.blockedPackets(of: $0) }
        controlSocket.lastBlockedDestination = { [unowned self] in self.enforcer?.lastDestination(of: $0) }
        broker.onAuditLogGrew = { [unowned self] in self.controlSocket.notifyAuditLog() }
    }

    /// Runs until SIGTERM or SIGINT; then says goodbye for everything published.
    package func run() {
        appsDirectory.load(into: broker, logger: logger)
        staticServices.reload()
        logger.info(
            "heraldd running as \(network.engine.hostName), app socket \(appSocket.paths.joined(separator: " and ")), \(staticServices.count) static services"
        )
        notify { try $0.ready(status: "serving as \(network.engine.hostName)") }
        scheduleWatchdog()
        StartupPages.release(after: "opening the app sockets and loading apps and services", logger: logger)
        loop.run(
            nextDeadline: { [unowned self] in
                // Decisions made while handling a batch of requests are recorded as soon as the loop is idle.
                let now = MonotonicClock.milliseconds()
                let recordNow = self.broker.hasUnrecordedDecisions ? now : nil
                let next = [self.network.nextDeadline, self.nextWatchdog, recordNow].compactMap { $0 }.min()
                // Once start-up, or later work, has gone quiet, the pages of code it used are given back.
                let worked = self.deadlineWorked || self.loop.handledEvents != self.handledEventsSeen
                (self.handledEventsSeen, self.deadlineWorked) = (self.loop.handledEvents, false)
                if self.idlePages.isDue(nextDeadline: next, now: now, worked: worked) {
                    IdlePages.release(logger: self.logger)
                }
                // And whenever it goes quiet, what was freed goes back to the kernel.
                if self.heapTrim.isDue(nextDeadline: next, now: now) {
                    self.heapTrim.trimIfWorthIt(logger: self.logger)
                }
                return [next, self.idlePages.deadline(now: now)].compactMap { $0 }.min()
            },
            onDeadline: { [unowned self] in
                // Only a watchdog ping, or nothing at all, is not work.
                let now = MonotonicClock.milliseconds()
                if self.broker.hasUnrecordedDecisions || self.network.nextDeadline.map({ $0 <= now }) == true {
                    self.deadlineWorked = true
                }
                self.broker.flush()
                if let due = self.nextWatchdog, due <= MonotonicClock.milliseconds() {
                    self.notify { try $0.watchdog() }
                    self.scheduleWatchdog()
                }
                self.network.runDue()
            })
        broker.flush()
        enforcer?.stop()
        logger.info("heraldd stopped")
    }

    /// Pings the watchdog at half the interval systemd asked for.
    private func scheduleWatchdog() {
        guard let interval = notifier.watchdogInterval else { return }
        let milliseconds =
            Int64(interval.components.seconds) * 1000 + Int64(interval.components.attoseconds / 1_000_000_000_000_000)
        nextWatchdog = MonotonicClock.milliseconds() + max(1, milliseconds / 2)
    }

    /// Tells the service manager something; a failure is logged once and never stops the daemon.
    private func notify(_ message: (SystemdNotifier) throws -> Bool) {
        guard notifier.isEnabled else { return }
        do {
            _ = try message(notifier)
        } catch {
            logger.warning("cannot notify the service manager: \(error)")
        }
    }

    private func handleSignals() {
        for signal in signals.take() {
            switch signal {
            case SIGTERM, SIGINT:
                guard !stopping else { continue }
                stopping = true
                logger.info("stopping: sending goodbyes")
                notify { try $0.stopping() }
                network.shutdown()
                loop.stop()
            case SIGHUP:
                logger.info("reloading: re-reading interfaces, app manifests and service files")
                notify { try $0.reloading() }
                network.rescanInterfaces()
                appsDirectory.load(into: broker, logger: logger)
                staticServices.reload()
                if let change = configurationChanges?() { logger.notice("\(change)") }
                notify { try $0.ready() }
            default:
                break
            }
        }
    }
}

/// Why the daemon could not start, in words for the person who started it.
package struct DaemonStartError: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
