import HeraldClient
import HeraldIPC
import HeraldWire

/// Resolves service instances and looks up their hosts' addresses on a `DaemonSession`, and says when a
/// resolution is ready to show.
///
/// Each resolve may answer on several interfaces; every (instance, interface) gets its own result, and
/// every (host, interface) one address lookup, shared by the instances on that host. A result is shown
/// `settleTime` after it first changes, so that the addresses that follow an SRV answer within a moment
/// are shown with it; a later change (an address added or removed, a new TXT record) is shown again.
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
        var addresses: [String] = []
    }

    private let session: DaemonSession
    /// How long to wait for addresses after a change before showing it.
    let settleTime: Duration
    private var resolves: [ClientContext: (instance: Instance, interfaceIndex: UInt32)] = [:]
    private var results: [ResultKey: Result] = [:]
    private var lookups: [HostKey: Lookup] = [:]
    private var lookupKeys: [ClientContext: HostKey] = [:]

    init(session: DaemonSession, settleTime: Duration = .milliseconds(300)) {
        self.session = session
        self.settleTime = settleTime
    }

    /// Starts resolving `instance` on one interface (0: every interface).
    func resolve(_ instance: Instance, interfaceIndex: UInt32 = 0) throws {
        guard !resolves.values.contains(where: { $0.instance == instance && $0.interfaceIndex == interfaceIndex })
        else { return }
        let request = ResolveRequest(
            interfaceIndex: interfaceIndex, name: instance.name, regtype: instance.type,
            domain: instance.domain)
        let context = try session.start(.resolve(request), describedAs: "resolve \"\(instance.name)\" \(instance.type)")
        resolves[context] = (instance, interfaceIndex)
    }

    /// Stops resolving `instance` on an interface and forgets its result there.
    func stop(_ instance: Instance, interfaceIndex: UInt32) throws {
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
            guard case .addrInfo(let reply) = received.reply, let address = AddressText.text(of: reply.rdata) else {
                return true
            }
            var lookup = lookups[hostKey]!
            if reply.flags.contains(.add) {
                if !lookup.addresses.contains(address) { lookup.addresses.append(address) }
            } else {
                lookup.addresses.removeAll { $0 == address }
            }
            lookups[hostKey] = lookup
            for (key, result) in results
            where key.interfaceIndex == hostKey.interfaceIndex && result.host.lowercased() == hostKey.host {
                changed(key)
            }
            return true
        }
        return false
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
        let addresses =
            lookups[HostKey(host: result.host.lowercased(), interfaceIndex: key.interfaceIndex)]?.addresses ?? []
        return ServiceResolution(
            interfaceIndex: key.interfaceIndex, name: key.instance.name, type: key.instance.type,
            domain: key.instance.domain, fullName: result.fullName, host: result.host, port: result.port,
            txt: result.txt, addresses: addresses)
    }

    private func changed(_ key: ResultKey) {
        if results[key]?.dueAt == nil { results[key]?.dueAt = .now + settleTime }
    }

    private func lookUp(_ key: HostKey) throws {
        guard lookups[key] == nil, !key.host.isEmpty else { return }
        let request = AddrInfoRequest(interfaceIndex: key.interfaceIndex, protocol: [.ipv4, .ipv6], hostname: key.host)
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
