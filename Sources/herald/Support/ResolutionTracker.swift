import HeraldClient
import HeraldIPC
import HeraldWire

/// Resolves service instances and looks up their hosts' addresses on a `DaemonSession`, and says when a
/// resolution is ready to show.
///
/// Each resolve may answer on several interfaces; every (instance, interface) gets its own result, and
/// every (host, interface) one address lookup, shared by the instances on that host. A result is shown as
/// soon as it is complete: SRV and TXT, and for each address family an address or a peer's negative answer
/// (NSEC) saying the host has none (``HostAddresses``). One that is not complete (a responder that sends no
/// NSEC, a family that is slow to come) is shown `settleTime` after it first changed, with what it has. A later
/// change (an address added or removed, a new TXT record) is shown again.
final class ResolutionTracker {
    /// An instance to resolve: as the browse reply or the command line names it.
    struct Instance: Hashable {
        var name: String
        var type: String
        var domain: String
    }

    private struct ResultKey: Hashable {
        var instance: Instance
        var interfaceIndex: UInt32
    }

    private struct HostKey: Hashable {
        var host: String
        var interfaceIndex: UInt32
    }

    private struct Result {
        var fullName: String
        var host: String
        var port: UInt16
        var txt: [UInt8]
        var dueAt: ContinuousClock.Instant?
        var shown: ServiceResolution?
    }

    private struct Lookup {
        var context: ClientContext
        var known = HostAddresses()
    }

    private let session: DaemonSession
    /// How long an incomplete result waits for the rest of its addresses after a change before it is shown.
    let settleTime: Duration
    private var resolves: [ClientContext: (instance: Instance, interfaceIndex: UInt32)] = [:]
    private var results: [ResultKey: Result] = [:]
    private var lookups: [HostKey: Lookup] = [:]
    private var lookupKeys: [ClientContext: HostKey] = [:]
    /// Resolves waiting for `startQueued`.
    private var queued: [(instance: Instance, interfaceIndex: UInt32)] = []
    /// At most this many requests go out before their statuses are read.
    static let batchSize = 32

    init(session: DaemonSession, settleTime: Duration = .milliseconds(300)) {
        self.session = session
        self.settleTime = settleTime
    }

    /// Starts resolving `instance` on one interface (0: every interface).
    func resolve(_ instance: Instance, interfaceIndex: UInt32 = 0) throws {
        queueResolve(instance, interfaceIndex: interfaceIndex)
        try startQueued()
    }

    /// Resolves `instance` on one interface (0: every interface) with the next `startQueued`: a browse that
    /// finds many instances at once starts their resolves together, not one round trip to the daemon each.
    func queueResolve(_ instance: Instance, interfaceIndex: UInt32 = 0) {
        guard !resolves.values.contains(where: { $0.instance == instance && $0.interfaceIndex == interfaceIndex }),
            !queued.contains(where: { $0.instance == instance && $0.interfaceIndex == interfaceIndex })
        else { return }
        queued.append((instance, interfaceIndex))
    }

    /// Starts the resolves queued since the last call, in batches.
    func startQueued() throws {
        while !queued.isEmpty {
            let batch = queued.prefix(Self.batchSize)
            queued.removeFirst(batch.count)
            let contexts = try session.startAll(
                batch.map { instance, interfaceIndex in
                    let request = ResolveRequest(
                        interfaceIndex: interfaceIndex, name: instance.name, regtype: instance.type,
                        domain: instance.domain)
                    return (.resolve(request), "resolve \"\(instance.name)\" \(instance.type)")
                })
            for (context, entry) in zip(contexts, batch) { resolves[context] = entry }
        }
    }

    /// Stops resolving `instance` on an interface and forgets its result there.
    func stop(_ instance: Instance, interfaceIndex: UInt32) throws {
        queued.removeAll { $0.instance == instance && $0.interfaceIndex == interfaceIndex }
        for (context, entry) in resolves where entry.instance == instance && entry.interfaceIndex == interfaceIndex {
            try session.cancel(context)
            resolves[context] = nil
        }
        results = results.filter { !($0.key.instance == instance && $0.key.interfaceIndex == interfaceIndex) }
        try stopUnusedLookups()
    }

    /// Takes a reply if it belongs to one of the tracker's operations; returns false otherwise.
    func handle(_ received: ReceivedReply) throws -> Bool {
        if let (instance, _) = resolves[received.context] {
            guard case .resolve(let reply) = received.reply else { return true }
            let key = ResultKey(instance: instance, interfaceIndex: reply.interfaceIndex)
            let fullName = DNSName.readable(dnssdFullName: reply.fullname)
            let host = DNSName.readable(dnssdFullName: reply.hostTarget)
            var result = results[key] ?? Result(fullName: fullName, host: host, port: reply.port, txt: reply.txt)
            result.fullName = fullName
            result.host = host
            result.port = reply.port
            result.txt = reply.txt
            results[key] = result
            try lookUp(HostKey(host: host.lowercased(), interfaceIndex: reply.interfaceIndex))
            try stopUnusedLookups()
            changed(key)
            return true
        }
        if let hostKey = lookupKeys[received.context] {
            guard case .addrInfo(let reply) = received.reply, lookups[hostKey]!.known.apply(reply) else { return true }
            for (key, result) in results
            where key.interfaceIndex == hostKey.interfaceIndex && result.host.lowercased() == hostKey.host {
                changed(key)
            }
            return true
        }
        return false
    }

    /// True for a reply that reports a failure: any error but the NoSuchRecord of a negative answer.
    static func isFailure(_ received: ReceivedReply) -> Bool {
        received.reply.error != .noError && received.reply.error != .noSuchRecord
    }

    /// When the next result is due to be shown.
    var nextDue: ContinuousClock.Instant? { results.values.compactMap(\.dueAt).min() }

    /// Results whose settle time has passed and that differ from what was last shown, in a stable order.
    func due(at now: ContinuousClock.Instant = .now) -> [ServiceResolution] {
        var ready: [ServiceResolution] = []
        for key in results.keys.sorted(by: Self.order) {
            guard var result = results[key], let dueAt = result.dueAt, dueAt <= now else { continue }
            result.dueAt = nil
            let resolution = self.resolution(key, result)
            if resolution != result.shown {
                result.shown = resolution
                ready.append(resolution)
            }
            results[key] = result
        }
        return ready
    }

    /// Every current result (for one-shot commands, at the end), in a stable order.
    var all: [ServiceResolution] {
        results.keys.sorted(by: Self.order).map { resolution($0, results[$0]!) }
    }

    // MARK: - Internals

    private func resolution(_ key: ResultKey, _ result: Result) -> ServiceResolution {
        let known = lookups[HostKey(host: result.host.lowercased(), interfaceIndex: key.interfaceIndex)]?.known
        let addresses = (known?.addresses ?? []).compactMap(AddressText.text(of:))
        return ServiceResolution(
            interfaceIndex: key.interfaceIndex, name: key.instance.name, type: key.instance.type,
            domain: key.instance.domain, fullName: result.fullName, host: result.host, port: result.port,
            txt: result.txt, addresses: addresses)
    }

    private func changed(_ key: ResultKey) {
        guard let result = results[key] else { return }
        let hostKey = HostKey(host: result.host.lowercased(), interfaceIndex: key.interfaceIndex)
        if lookups[hostKey]?.known.isComplete == true {
            results[key]?.dueAt = .now
        } else if result.dueAt == nil {
            results[key]?.dueAt = .now + settleTime
        }
    }

    private func lookUp(_ key: HostKey) throws {
        guard lookups[key] == nil, !key.host.isEmpty else { return }
        // Negative answers too: a peer's NSEC saying the host has no address of a family completes the lookup.
        let request = AddrInfoRequest(
            flags: .returnIntermediates, interfaceIndex: key.interfaceIndex, protocol: [.ipv4, .ipv6],
            hostname: key.host)
        let context = try session.start(.addrInfo(request), describedAs: "lookup \(key.host)")
        lookups[key] = Lookup(context: context)
        lookupKeys[context] = key
    }

    private func stopUnusedLookups() throws {
        let used = Set(results.map { HostKey(host: $0.value.host.lowercased(), interfaceIndex: $0.key.interfaceIndex) })
        for (key, lookup) in lookups where !used.contains(key) {
            try session.cancel(lookup.context)
            lookups[key] = nil
            lookupKeys[lookup.context] = nil
        }
    }

    private static func order(_ a: ResultKey, _ b: ResultKey) -> Bool {
        (a.instance.name, a.instance.type, a.interfaceIndex) < (b.instance.name, b.instance.type, b.interfaceIndex)
    }
}
