import HeraldBroker
import HeraldControl
import HeraldEngine
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the kernel's rules, the nftables table `inet herald`, in step with the store's decisions, the cgroups
/// that exist and the interfaces' addresses (docs/enforcement.md): replaced whole, in one transaction, at start,
/// after every operator change, on every address change, and when the cgroups of apps come or go.
package final class KernelEnforcer {
    /// The `[permissions]` settings of enforcement.
    package struct Settings: Sendable {
        package var mode: EnforcementMode
        package var failClosed: Bool
        package var exemptUnits: [String]
        /// The operator group, whose members' sockets are never held back (as root's are not).
        package var operatorGroupID: UInt32?
        /// A file that exists while the kernel holds a table of heraldd's (see ``removeLeftovers(marker:logger:)``).
        package var marker: String?

        package init(
            mode: EnforcementMode, failClosed: Bool, exemptUnits: [String], operatorGroupID: UInt32?,
            marker: String? = nil
        ) {
            self.mode = mode
            self.failClosed = failClosed
            self.exemptUnits = exemptUnits
            self.operatorGroupID = operatorGroupID
            self.marker = marker
        }
    }

    /// How often the cgroup tree is looked at for apps' cgroups that came or went, in milliseconds.
    static let cgroupScanInterval: Int64 = 500

    package let settings: Settings
    private let hierarchy: CgroupHierarchy
    private let logger: Logger
    private let monitor = InterfaceMonitor()
    private let loop: EventLoop
    private var timer: LoopTimer?
    private var snapshot: PermissionSnapshot
    /// The input and text of the rules in force.
    private var input: EnforcementInput?
    private var applied: String?
    private var updates = 0
    private var lastError: String?
    /// The ingress program that holds back incoming multicast and broadcast, and the cgroups last read.
    private var ingress: CgroupIngress?
    /// The programs that judge a socket made before its process moved by the process's cgroup.
    private var moved: MovedSockets?
    /// Ends the connections of processes that moved into a held-back cgroup, made before they did.
    private var sweep: MovedProcessSweep?
    private var cgroups: [String] = []
    /// Packets held back per app id: of the tables replaced since heraldd started, and of the table in force.
    private var blockedBefore: [String: Int] = [:]
    private var blockedNow: [String: Int] = [:]
    /// When the counters are read next (the monotonic millisecond).
    private var nextCounterRead: Int64 = 0
    /// When each app's held-back packets were last reported through ``onBlocked``.
    private var lastReported: [String: Int64] = [:]
    /// One app's held-back packets are reported at most this often, in milliseconds.
    static let blockedReportInterval: Int64 = 10_000

    /// Called with an app's id when the rules held back its packets: at once the first time, then at most every
    /// ``blockedReportInterval``.
    package var onBlocked: (String) -> Void = { _ in }

    /// Puts the rules of `snapshot` in place; throws, with what to do, when the kernel rules cannot be used.
    package init(settings: Settings, snapshot: PermissionSnapshot, loop: EventLoop, logger: Logger) throws {
        self.settings = settings
        self.snapshot = snapshot
        self.loop = loop
        self.logger = logger
        hierarchy = try CgroupHierarchy.current().get()
        try apply()
        do {
            ingress = try CgroupIngress(
                mountPoint: hierarchy.mountPoint, operatorUIDs: input?.operatorUIDs ?? [0], logger: logger)
        } catch {
            _ = try? NFTables.run(EnforcementRuleset.removal)
            throw error
        }
        moved = MovedSockets(
            mountPoint: hierarchy.mountPoint, mode: settings.mode, operatorUIDs: input?.operatorUIDs ?? [0],
            logger: logger)
        sweep = MovedProcessSweep(mountPoint: hierarchy.mountPoint, logger: logger)
        updateIngress()
        if let marker = settings.marker { close(open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)) }
        if monitor.fd >= 0 {
            try loop.register(monitor.fd, for: .readable) { [unowned self] _ in
                if self.monitor.drainNotifications() { self.refresh() }
            }
        }
        let timer = try LoopTimer(loop: loop) { [unowned self] in
            let now = MonotonicClock.milliseconds()
            if now >= self.nextCounterRead {
                self.readCounters()
                // Reading thousands of counters takes nft a while: at most a twentieth of the time goes to it.
                let took = MonotonicClock.milliseconds() - now
                self.nextCounterRead = now + max(Self.cgroupScanInterval, took * 20)
            }
            self.refresh()
            self.timer?.schedule(at: MonotonicClock.milliseconds() + Self.cgroupScanInterval)
        }
        timer.schedule(at: MonotonicClock.milliseconds() + Self.cgroupScanInterval)
        self.timer = timer
        logger.notice(
            "enforcement: \(settings.mode.rawValue), \(input?.apps.filter { !$0.granted }.count ?? 0) apps held back (cgroups below \(hierarchy.mountPoint)); \(ingressDescription); \(movedDescription)"
        )
    }

    deinit {
        if monitor.fd >= 0 { loop.unregister(monitor.fd) }
    }

    /// Rebuilds the rules after the decisions or manifests changed.
    package func update(_ snapshot: PermissionSnapshot) {
        self.snapshot = snapshot
        refresh()
    }

    /// Rebuilds the rules; a failure is logged and the rules in force stay.
    package func refresh() {
        do {
            try apply()
            lastError = nil
        } catch {
            if lastError != error.description { logger.error("enforcement: \(error); the previous rules stay") }
            lastError = error.description
        }
        updateIngress()
    }

    /// Attaches the ingress program to the cgroups the rules in force imply, and only to them, and gives the
    /// moved-socket programs the cgroups' standings under those rules.
    private func updateIngress() {
        guard let input else { return }
        ingress?.update(
            targets: IngressTargets.targets(for: input, cgroups: cgroups), operatorUIDs: input.operatorUIDs)
        let standings = SocketStanding.entries(for: input, cgroups: cgroups)
        moved?.update(standings: standings, operatorUIDs: input.operatorUIDs)
        if let moved, let sweep {
            let fallback = SocketStanding.fallback(for: input.mode)
            sweep.sweep(
                cgroups: cgroups, standing: { standings[$0] ?? fallback }, origin: moved.standing(ofCgroupID:),
                networks: input.networks, operatorUIDs: input.operatorUIDs)
        }
    }

    /// What `herald status` and the log say of sockets made before a process moved.
    private var movedDescription: String {
        guard let moved else { return "sockets made before a move not judged" }
        if let reason = moved.unavailable { return "sockets made before a move NOT judged by their caller: \(reason)" }
        var text = "sockets made before a move judged by their caller (\(moved.socketsFollowed ?? 0) sockets followed"
        if let sweep {
            text += sweep.unavailable.map { "; connections NOT ended: \($0))" } ?? ", \(sweep.ended) connections ended)"
        }
        return text
    }

    /// What `herald status` and the log say of incoming multicast and broadcast.
    private var ingressDescription: String {
        guard let ingress else { return "incoming multicast and broadcast not held back" }
        if let reason = ingress.unavailable { return "incoming multicast and broadcast NOT held back: \(reason)" }
        return "incoming multicast and broadcast held back at \(ingress.attachedCount) cgroups"
    }

    /// What a clean stop leaves (docs/enforcement.md, "Stopping"): no table and no program (fail-open), or every
    /// app held back, the ingress program's pinned links included.
    package func stop() {
        moved?.detach()
        if settings.failClosed, let input, let ingress {
            ingress.update(
                targets: IngressTargets.targets(for: input.closed, cgroups: cgroups), operatorUIDs: input.operatorUIDs)
            let kept = ingress.keepPinned()
            logger.info("enforcement: the ingress program stays attached at \(kept) cgroups until heraldd runs")
        } else if let ingress, ingress.attachedCount > 0 {
            ingress.detachAll()
            logger.info("enforcement: the ingress program is detached from every cgroup")
        }
        do {
            if settings.failClosed, let input {
                try NFTables.run(EnforcementRuleset.replacing(with: input.closed))
                logger.notice("enforcement: stopped fail-closed: every registered app is held back until heraldd runs")
            } else {
                try NFTables.run(EnforcementRuleset.removal)
                if let marker = settings.marker { unlink(marker) }
                logger.info("enforcement: stopped fail-open: the table inet herald is removed")
            }
        } catch {
            logger.error("enforcement: cannot change the rules when stopping: \(error)")
        }
    }

    /// With `enforcement = off`, at start: removes the table an earlier heraldd left in the kernel (after a crash,
    /// or a fail-closed stop, before the switch to `off`), with one line in the log. It looks only when `marker`
    /// says an earlier heraldd loaded rules, so that a daemon that never enforced does not even load libnftables.
    /// The ingress program's links it left pinned are removed too.
    package static func removeLeftovers(marker: String, logger: Logger) {
        guard access(marker, F_OK) == 0 else { return }
        let pinned = CgroupIngress.removePinned()
        if pinned > 0 {
            logger.notice("enforcement: off: detached the \(pinned) ingress links an earlier heraldd left pinned")
        }
        let family = "\(EnforcementRuleset.family) \(EnforcementRuleset.table)"
        do {
            try NFTables.run("list table \(family)")
        } catch .refused {
            // No such table: nothing was left.
            unlink(marker)
            return
        } catch {
            let text =
                "enforcement: off, but an earlier heraldd may have left the table \(family), and heraldd cannot "
                + "look: \(error); remove it with 'nft delete table \(family)'"
            logger.error("\(text)")
            return
        }
        do {
            try NFTables.run(EnforcementRuleset.removal)
            unlink(marker)
            logger.notice("enforcement: off: removed the table \(family) an earlier heraldd left")
        } catch {
            logger.error("enforcement: off, but the table \(family) an earlier heraldd left stays: \(error)")
        }
    }

    /// The packets the rules held back of the app `id` since heraldd started.
    package func blockedPackets(of id: String) -> Int {
        (blockedBefore[id] ?? 0) + (blockedNow[id] ?? 0)
    }

    /// Where the latest packet the rules held back of the app `id` went, in the last
    /// ``EnforcementRuleset/destinationTimeout``; nil when none did.
    package func lastDestination(of id: String) -> String? {
        guard let input, let name = EnforcementRuleset.heldNames(for: input).first(where: { $0.id == id })?.name
        else { return nil }
        let family = "\(EnforcementRuleset.family) \(EnforcementRuleset.table)"
        let latest = ["4", "6"].compactMap { suffix in
            (try? NFTables.run("list set \(family) \(name)_\(suffix)")).flatMap(HeldDestinations.latest(inListing:))
        }
        return latest.max { $0.expiresIn < $1.expiresIn }?.address
    }

    /// Reads the counters of the table in force, and reports the apps whose held-back packets grew.
    private func readCounters() {
        guard applied != nil,
            let listing = try? NFTables.run(
                "list counters table \(EnforcementRuleset.family) \(EnforcementRuleset.table)")
        else { return }
        let counts = BlockedCounts.parse(listing: listing)
        let now = MonotonicClock.milliseconds()
        for (id, count) in counts.sorted(by: { $0.key < $1.key }) where count > blockedNow[id] ?? 0 {
            if let last = lastReported[id], now - last < Self.blockedReportInterval { continue }
            lastReported[id] = now
            onBlocked(id)
        }
        blockedNow = counts
    }

    /// The state for `herald status`.
    package var status: ControlStatus.Enforcement {
        let apps = input?.apps ?? []
        return ControlStatus.Enforcement(
            mode: settings.mode.rawValue, failClosed: settings.failClosed,
            appsHeldBack: apps.filter { !$0.granted && !$0.cgroups.isEmpty }.count,
            appsGranted: apps.filter { $0.granted && !$0.cgroups.isEmpty }.count,
            cgroups: Set(apps.flatMap(\.cgroups) + (input?.exemptCgroups ?? [])).count, updates: updates,
            lastError: lastError, ingress: ingressDescription, movedSockets: movedDescription)
    }

    /// Replaces the rules when what they are made from changed. A cgroup that went away between reading the tree
    /// and loading the rules makes nft refuse them; the tree is read again once.
    private func apply() throws(EnforcementError) {
        for attempt in 0..<2 {
            let next = currentInput()
            let text = EnforcementRuleset.replacing(with: next)
            if text == applied { return }
            do {
                // A new table starts its counters at zero: what the old one counted is kept.
                readCounters()
                try NFTables.run(text)
                blockedBefore.merge(blockedNow, uniquingKeysWith: +)
                blockedNow = [:]
                (input, applied) = (next, text)
                updates += 1
                return
            } catch .refused(let reason) where attempt == 0 && reason.contains("cgroupv2") {
                continue
            }
        }
    }

    /// The input of the rules now: the store's apps with the cgroups that match their selectors, the interfaces'
    /// networks, the operators and the exempted cgroups.
    private func currentInput() -> EnforcementInput {
        var byApp: [AppID: [String]] = [:]
        var exempt: [String] = []
        cgroups = hierarchy.cgroups()
        for path in cgroups {
            guard let unit = CgroupHierarchy.unit(ofCgroup: path), EnforcementRuleset.isNameable(cgroup: path) else {
                continue
            }
            for manifest in snapshot.registry.manifests
            where manifest.systemdUnits.contains(where: { unit.matches(selector: $0) }) {
                byApp[manifest.id, default: []].append(path)
            }
            if unit.manager == .system, settings.exemptUnits.contains(where: { unit.matches(selector: $0) }) {
                exempt.append(path)
            }
        }
        if let own = CgroupHierarchy.ownCgroup(), EnforcementRuleset.isNameable(cgroup: own) { exempt.append(own) }
        let apps = snapshot.registry.manifests.map { manifest in
            EnforcedApp(
                id: manifest.id.description, granted: snapshot.decision(for: manifest.id) == .granted,
                multicast: manifest.hasMulticastEntitlement, cgroups: byApp[manifest.id] ?? [])
        }
        let addresses = InterfaceMonitor.snapshot().filter { !$0.isLoopback }.flatMap(\.addresses).map {
            link -> (address: IPPrefix.Address, prefixLength: Int) in
            switch link.address {
            case .v4(let v4): return (.v4(v4), link.prefixLength)
            case .v6(let v6): return (.v6(v6), link.prefixLength)
            }
        }
        return EnforcementInput(
            mode: settings.mode, apps: apps, networks: LocalNetworks(addresses: addresses),
            operatorUIDs: Self.operatorUIDs(group: settings.operatorGroupID), exemptCgroups: exempt,
            cgroupMount: hierarchy.nftPrefix)
    }

    /// Root and the members of the operator group.
    private static func operatorUIDs(group: UInt32?) -> [UInt32] {
        var uids: Set<UInt32> = [0]
        guard let group, let entry = getgrgid(group) else { return [0] }
        var member = entry.pointee.gr_mem
        while let name = member?.pointee {
            if let user = getpwnam(name) { uids.insert(user.pointee.pw_uid) }
            member = member?.advanced(by: 1)
        }
        return uids.sorted()
    }
}
