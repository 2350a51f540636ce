import HeraldEngine
import HeraldSession
import HeraldWire
import Logging

/// Runs the mDNS engine on real interfaces: feeds it packets from the multicast sockets and interface changes
/// from the kernel, carries out what it asks (sending packets, delivering events), and wakes it on time.
/// Lives on the event loop's thread.
package final class NetworkService {
    package private(set) var engine: MDNSEngine
    private let loop: EventLoop
    private let sockets: [IPFamily: MulticastSocket]
    private let monitor: InterfaceMonitor
    private let policy: InterfacePolicy
    private let logger: Logger
    /// The interfaces in use, by index.
    package private(set) var interfaces: [Int: NetworkInterface] = [:]
    /// The links whose multicast group was joined and which the engine runs on. A link whose join failed (too many
    /// groups, an interface still being set up) is not among them, so the next rescan tries it again.
    private var linksInUse: Set<LinkID> = []
    /// Links whose join failed, reported once each; they are tried again at every interface change and on a
    /// timer (`joinRetry`), since what made the join fail may pass without any interface changing.
    private var failedJoins: Set<LinkID> = []
    private var joinRetry = JoinRetry()
    /// Interfaces the configuration names that were reported unusable (each is reported once until it is used).
    private var warnedUnusable: Set<String> = []
    /// Hands each operation event the engine delivers to the owner of the operation, and tells the owners when a
    /// batch of engine actions is over (so replies can be sent together).
    package let router = EngineEventRouter()
    /// Runs after the engine took another host name, for what is named after the host (`%h` in service files).
    package var onHostRenamed: () -> Void = {}
    /// Packets the kernel refused to send (an interface that just went away, a full buffer).
    package private(set) var sendFailures = 0
    /// Drops floods from any one source before they reach the engine.
    private var rateLimiter: SourceRateLimiter
    /// Whether packets arrive fast enough to let them gather between reads.
    private var moderation = ReceiveModeration()
    private var lastDropReport = Instant.zero
    /// The engine's count of records dropped from full caches when it was last logged.
    private var reportedDroppedRecords = 0
    /// The host name last seen published, to report conflict renames (RFC 6762 §9).
    private var publishedHostName: DNSName?

    package init(
        configuration: EngineConfiguration, policy: InterfacePolicy, loop: EventLoop, logger: Logger,
        port: UInt16 = HeraldWire.mdnsPort, families: [IPFamily] = IPFamily.allCases,
        rateLimiter: SourceRateLimiter = SourceRateLimiter(rate: 1000, burst: 1000)
    ) throws(SystemError) {
        self.engine = MDNSEngine(configuration: configuration)
        self.rateLimiter = rateLimiter
        self.loop = loop
        self.policy = policy
        self.logger = logger
        var sockets: [IPFamily: MulticastSocket] = [:]
        for family in families { sockets[family] = try MulticastSocket(family: family, port: port) }
        self.sockets = sockets
        self.monitor = InterfaceMonitor()
        for socket in sockets.values {
            try loop.register(socket.fd, for: .readable) { [unowned self] _ in self.readPackets(from: socket) }
        }
        if monitor.fd >= 0 {
            try loop.register(monitor.fd, for: .readable) { [unowned self] _ in
                if self.monitor.drainNotifications() { self.rescanInterfaces() }
            }
        } else {
            logger.warning("cannot listen to netlink: interface changes will not be followed")
        }
        rescanInterfaces()
    }

    /// The engine's clock: monotonic milliseconds.
    package var now: Instant { Instant(milliseconds: MonotonicClock.milliseconds()) }

    /// When the engine next needs to run (or a failed multicast join is due to be tried again).
    package var nextDeadline: Int64? { [engine.nextDeadline?.milliseconds, joinRetry.dueAt].compactMap { $0 }.min() }

    /// Runs the engine's timers.
    package func runDue() {
        let time = now
        if let due = joinRetry.dueAt, due <= time.milliseconds {
            rescanInterfaces()
        }
        engine.advance(to: time)
        performActions()
    }

    /// Changes the engine and carries out what it asks.
    package func perform(_ body: (inout MDNSEngine, Instant) -> Void) {
        body(&engine, now)
        performActions()
    }

    /// Publishes the host under another name at an operator's request (Avahi's `SetHostName`) until heraldd
    /// restarts: the old name says goodbye, the new one is probed, and ``onHostRenamed`` runs. `requester` says who
    /// asked, for the log.
    package func setHostName(_ label: String, requester: String) {
        let previous = engine.hostName
        engine.setHostName(label, at: now)
        let current = engine.hostName
        guard current != previous else { return }
        publishedHostName = current
        logger.notice(
            "host name \(previous) changed to \(current) at the request of \(requester), until heraldd restarts")
        performActions()
        onHostRenamed()
    }

    /// Says goodbye for everything published and stops listening.
    package func shutdown() {
        engine.shutdown(at: now)
        performActions()
    }

    private func readPackets(from socket: MulticastSocket) {
        var count = 0
        while count < 256, let datagram = socket.receive() {
            count += 1
            guard interfaces[datagram.interfaceIndex] != nil else { continue }
            let time = now
            guard rateLimiter.admit(datagram.source.address, at: time) else { continue }
            let link = LinkID(interfaceIndex: datagram.interfaceIndex, family: socket.family)
            engine.receive(datagram.bytes, from: datagram.source, on: link, toUnicast: datagram.toUnicast, at: time)
        }
        let pause = moderation.noteRead(packets: count, at: now.milliseconds)
        if pause > 0 { loop.holdBack(socket.fd, watching: .readable, forMilliseconds: pause) }
        reportDroppedPackets()
        performActions()
    }

    /// Logs, at most every ten seconds, which sources were rate-limited, and how many records the cache dropped
    /// because it was full.
    private func reportDroppedPackets() {
        let time = now
        guard time - lastDropReport >= 10_000 else { return }
        let droppedRecords = engine.cacheRecordsDroppedWhenFull
        if droppedRecords > reportedDroppedRecords {
            logger.warning(
                "cache full (\(engine.configuration.cacheLimitPerLink) records per interface and family): dropped \(droppedRecords - reportedDroppedRecords) records since the last report, \(droppedRecords) since start"
            )
            reportedDroppedRecords = droppedRecords
            lastDropReport = time
        }
        let dropped = rateLimiter.takeDropped()
        guard !dropped.isEmpty else { return }
        lastDropReport = time
        let worst = dropped.sorted { $0.value > $1.value }.prefix(3).map { "\($0.key) (\($0.value))" }
        logger.warning(
            "rate limit: dropped \(dropped.values.reduce(0, +)) packets from \(dropped.count) sources, most from \(worst.joined(separator: ", "))"
        )
    }

    private func performActions() {
        for action in engine.takeActions() {
            switch action {
            case .send(let packet):
                guard let socket = sockets[packet.link.family] else { continue }
                if !socket.send(packet.bytes, interfaceIndex: packet.link.interfaceIndex, to: packet.destination) {
                    sendFailures += 1
                    logger.debug("send failed on \(packet.link) to \(packet.destination)")
                }
            case .deliver(let operation, let event):
                router.route(event, for: operation)
            }
        }
        noteHostNameChange()
        router.batchEnded()
    }

    /// Logs when the engine moves to another host name (a conflict with another host, RFC 6762 §9), and tells
    /// ``onHostRenamed``.
    private func noteHostNameChange() {
        let current = engine.hostName
        let previous = publishedHostName
        publishedHostName = current
        guard let previous, previous != current else { return }
        logger.notice("host name \(previous) is taken by another host: now publishing as \(current)")
        onHostRenamed()
    }

    /// Re-reads the interfaces and tells the engine what came, changed and went.
    package func rescanInterfaces() {
        let all = InterfaceMonitor.snapshot()
        let current = all.filter(policy.accepts)
        warnAboutUnusableAllowedInterfaces(all: all, used: current)
        let currentByIndex = Dictionary(current.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        let time = now
        for (index, old) in interfaces where currentByIndex[index] == nil {
            logger.info("interface \(old.name) is gone")
            for link in old.links.keys.sorted() { stopUsing(link, at: time) }
            for socket in sockets.values { socket.leave(interfaceIndex: index) }
        }
        for interface in current {
            let oldLinks = interfaces[interface.index]?.links ?? [:]
            let newLinks = interface.links
            for (link, _) in oldLinks where newLinks[link] == nil { stopUsing(link, at: time) }
            for (link, addresses) in newLinks.sorted(by: { $0.key < $1.key }) {
                guard let socket = sockets[link.family] else { continue }
                let mtu = interface.mtu(for: link.family)
                guard linksInUse.contains(link) else {
                    do {
                        try socket.join(interfaceIndex: interface.index)
                        logger.info(
                            "using \(interface.name) (\(link.family.rawValue), MTU \(mtu)): \(addresses.map { $0.address.description }.joined(separator: ", "))"
                        )
                        linksInUse.insert(link)
                        failedJoins.remove(link)
                        engine.addLink(link, addresses: addresses, mtu: mtu, at: time)
                    } catch {
                        if failedJoins.insert(link).inserted {
                            logger.warning(
                                "cannot join the mDNS group on \(interface.name) (\(link.family.rawValue)), trying again at each interface change and every \(JoinRetry.longestDelay / 1000) s at most: \(error)"
                            )
                        }
                    }
                    continue
                }
                if let old = interfaces[interface.index]?.mtu(for: link.family), old != mtu {
                    logger.info("MTU of \(interface.name) (\(link.family.rawValue)) changed from \(old) to \(mtu)")
                    engine.updateMTU(link, mtu: mtu)
                }
                if oldLinks[link] != addresses {
                    logger.info(
                        "addresses of \(interface.name) (\(link.family.rawValue)) changed: \(addresses.map { $0.address.description }.joined(separator: ", "))"
                    )
                    engine.updateAddresses(link, addresses: addresses, at: time)
                }
            }
        }
        interfaces = currentByIndex
        failedJoins.formIntersection(currentByIndex.values.flatMap { $0.links.keys })
        joinRetry.scan(finishedWithFailures: !failedJoins.isEmpty, at: time.milliseconds)
        performActions()
    }

    /// Says once why an interface the configuration names (`--interface`, `allow-interfaces`) is not used: it does
    /// not exist, or is down, loopback, or cannot multicast. It is used as soon as that changes.
    private func warnAboutUnusableAllowedInterfaces(all: [NetworkInterface], used: [NetworkInterface]) {
        for name in policy.allow where !used.contains(where: { $0.name == name }) {
            guard warnedUnusable.insert(name).inserted else { continue }
            let reason: String
            if policy.deny.contains(name) {
                reason = "the configuration also denies it (deny-interfaces)"
            } else if let interface = all.first(where: { $0.name == name }) {
                reason =
                    interface.isLoopback
                    ? "it is a loopback interface"
                    : !interface.supportsMulticast ? "it cannot send multicast" : "it is down"
            } else {
                reason = "there is no interface of that name"
            }
            logger.warning(
                "not using interface \(name), which the configuration names: \(reason); it is used as soon as it can be"
            )
        }
        warnedUnusable.formIntersection(policy.allow.filter { name in !used.contains { $0.name == name } })
    }

    private func stopUsing(_ link: LinkID, at time: Instant) {
        linksInUse.remove(link)
        engine.removeLink(link, at: time)
    }
}
