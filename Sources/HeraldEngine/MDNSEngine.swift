import HeraldWire

/// Settings of an engine.
package struct EngineConfiguration: Sendable {
    /// This host's name label (published as `<hostName>.local.`).
    package var hostName: String
    /// Publish the host's address records (A/AAAA and reverse PTR) on each link.
    package var publishAddresses = true
    /// The most records cached per link. Large enough for a LAN with a couple of thousand services.
    package var cacheLimitPerLink = 16_384
    /// The largest datagram to send (RFC 6762 §17).
    package var messageSizeLimit = MessageSizeLimit.default
    /// RFC 6762 §5.2: the random delay before the first query of a new question.
    package var firstQueryDelay = MDNSConstants.firstQueryDelayMin...MDNSConstants.firstQueryDelayMax
    /// Whether the first query of a question with nothing cached asks for unicast replies (QU, RFC 6762 §5.4).
    /// Off for hosts whose firewall lets only multicast reach port 5353.
    package var unicastFirstQueries = true
    /// RFC 6762 §8.1: the random delay before the first probe after a link comes up or its addresses change, and
    /// after a conflict.
    package var probeInitialDelay = 0...MDNSConstants.probeInitialDelayMax
    /// The random delay before the first probe of a registration made on a link settled for
    /// ``MDNSConstants/linkSettleTime`` (see ``MDNSConstants/requestedProbeDelayMin``).
    package var requestedProbeDelay = MDNSConstants.requestedProbeDelayMin...MDNSConstants.requestedProbeDelayMax
    /// The seed of the engine's random source.
    package var seed: UInt64

    package init(hostName: String, seed: UInt64) {
        self.hostName = hostName
        self.seed = seed
    }
}

/// The mDNS protocol engine: a deterministic state machine with no sockets and no clock of its own.
///
/// The driver feeds it events — a packet arrived, a link appeared, a client asked for something, time
/// passed — each with the current instant, then takes the resulting actions (packets to send, events for
/// operations) with ``takeActions()``, and calls ``advance(to:)`` again at ``nextDeadline``.
package struct MDNSEngine: Sendable {
    package let configuration: EngineConfiguration
    var random: EngineRandom
    var now: Instant = .zero

    /// The links in use and this host's addresses on each.
    var links: [LinkID: [LinkAddress]] = [:]
    /// When each link last saw something other hosts may have seen at the same moment: it came up, its interface's
    /// addresses changed, or this host's name met a conflict. Registrations until it settles probe on §8.1's full
    /// schedule.
    var linkEvents: [LinkID: Instant] = [:]
    /// Each link's MTU, which bounds every message with several records (RFC 6762 §17).
    var linkMTUs: [LinkID: Int] = [:]
    var caches = LinkTable<RecordCache>()
    /// What caches since replaced or removed had dropped when full (``cacheRecordsDroppedWhenFull``).
    var droppedByRetiredCaches = 0
    var querier: Querier
    var operations: [OperationID: ClientOperation] = [:]
    /// The queries reporting negative answers, by the name they ask about: an NSEC record of that name may change
    /// what they report.
    var negativeAnswerWatchers: [DNSName: Set<OperationID>] = [:]
    var publications: [OperationID: Publication] = [:]
    var authority = AuthorityTable()
    var scheduler = ResponseScheduler()
    /// Probes, announcements and goodbyes of the current step, sent together at its end (``MulticastBatch``).
    var multicastBatches: [LinkID: MulticastBatch] = [:]
    /// When the latest new publication on each link sends its first probe: others started within the initial wait
    /// join it (see ``startPublication(_:on:)``).
    var firstProbes: [LinkID: Instant] = [:]
    /// Cached records that peers' queries asked for without an answer being seen (RFC 6762 §10.5), and records
    /// being reconfirmed (§10.4).
    var failureObserver = FailureObserver()
    /// The queries of reconfirmations still to send.
    var reconfirmQueries: [ReconfirmQuery] = []
    /// Reconfirmation queries sent within the last second (each question at most once a second per link).
    var reconfirmQueriesSent: [ReconfirmQuery] = []
    /// Conflicts seen lately, slowing probing down when there are too many (RFC 6762 §8.1).
    var conflictLimiter = ConflictRateLimiter()
    /// When this host last asked a QU question on each link: unicast responses are accepted for two seconds.
    var lastUnicastQuestion: [LinkID: Instant] = [:]
    /// True after ``shutdown(at:)``: the engine ignores everything from then on.
    package internal(set) var isShutDown = false
    /// The host name label in use (it changes when a conflict forces a rename, or an operator sets another).
    package internal(set) var hostLabel: String {
        didSet { hostName = Self.hostName(label: hostLabel) }
    }
    /// The host's full name, e.g. `myhost.local.` (the daemon compares it after every turn of its loop, so it is
    /// kept, not made on each read).
    package private(set) var hostName: DNSName
    /// The label conflict renames count from (`host-2`, `host-3` …): the configured one, or the one last set.
    var hostBaseLabel: String
    var hostRenames = 0
    /// The operation ID of the host's own address publication.
    static let hostPublication = OperationID(0)

    private var outbox: [EngineAction] = []
    /// Counters for `herald status` and for tests.
    package internal(set) var statistics = EngineStatistics()

    /// How many of its own records' last multicast the responder remembers (for RFC 6762 §6's one-second rule and
    /// §5.4's "multicast recently"): only those that can still matter, so churning registrations leave none behind.
    package var rememberedMulticastCount: Int { scheduler.rememberedMulticasts }

    package init(configuration: EngineConfiguration) {
        self.configuration = configuration
        self.random = EngineRandom(seed: configuration.seed)
        self.hostLabel = configuration.hostName
        self.hostName = Self.hostName(label: configuration.hostName)
        self.hostBaseLabel = configuration.hostName
        self.querier = Querier(
            firstQueryDelay: configuration.firstQueryDelay, sizeLimit: configuration.messageSizeLimit,
            unicastFirstQueries: configuration.unicastFirstQueries)
    }

    private static func hostName(label: String) -> DNSName {
        (try? DNSName(labels: [Array(label.utf8), Array("local".utf8)])) ?? "local."
    }

    /// Everything the engine wants done since the last call.
    package mutating func takeActions() -> [EngineAction] {
        flushMulticasts()
        // The caller gets the buffer itself; keeping its capacity here would allocate a second buffer as large as
        // the largest step ever (a burst of thousands of events) on every call, and hold it for good.
        defer { outbox = [] }
        return outbox
    }

    mutating func emit(_ action: EngineAction) { outbox.append(action) }

    mutating func send(_ bytes: [UInt8], on link: LinkID, to destination: PacketDestination) {
        statistics.packetsSent += 1
        emit(.send(OutgoingPacket(link: link, destination: destination, bytes: bytes)))
    }

    /// The room for a message on a link: `shared` for one with several records (never fragmented), `alone` for one
    /// record (or one probe) too big for that (RFC 6762 §17).
    func messageRoom(for link: LinkID) -> MessageRoom {
        let limit = configuration.messageSizeLimit
        let ipv6 = link.family == .ipv6
        return MessageRoom(
            shared: limit.sharedPayloadLimit(ipv6: ipv6, mtu: linkMTUs[link] ?? MessageSizeLimit.ethernetMTU),
            alone: limit.payloadLimit(ipv6: ipv6))
    }

    /// The next instant at which ``advance(to:)`` has work to do, if any.
    package var nextDeadline: Instant? {
        var earliest = querier.nextDeadline
        func consider(_ candidate: Instant?) {
            if let candidate, candidate < earliest ?? .distantFuture { earliest = candidate }
        }
        consider(scheduler.nextDeadline)
        for cache in caches.values { consider(cache.nextExpiry) }
        for publication in publications.values {
            for phase in publication.phases.values { consider(phase.nextAt) }
        }
        consider(failureObserver.nextDeadline)
        for query in reconfirmQueries { consider(query.at) }
        return earliest
    }

    /// Does everything due at `time`: expiries, probes, announcements, responses and queries.
    package mutating func advance(to time: Instant) {
        now = max(now, time)
        guard !isShutDown else { return }
        for link in caches.keys.sorted() {
            let changes = caches[link]!.expire(at: now)
            dispatch(changes, on: link)
        }
        flushFailedRecords()
        sendDueReconfirmQueries()
        runPublications()
        flushMulticasts()
        sendDueResponses()
        var askedForUnicast: Set<LinkID> = []
        for packet in querier.sendDue(at: now, cache: &caches, mtus: linkMTUs, askedForUnicast: &askedForUnicast) {
            statistics.queriesSent += 1
            send(packet.bytes, on: packet.link, to: packet.destination)
        }
        for link in askedForUnicast { lastUnicastQuestion[link] = now }
    }

    // MARK: - Links

    /// A link came up (or the engine starts using it) with this host's addresses on it, and its interface's MTU.
    package mutating func addLink(
        _ link: LinkID, addresses: [LinkAddress], mtu: Int = MessageSizeLimit.ethernetMTU,
        at time: Instant
    ) {
        now = max(now, time)
        guard links[link] == nil else {
            updateMTU(link, mtu: mtu)
            updateAddresses(link, addresses: addresses, at: time)
            return
        }
        links[link] = addresses
        linkEvents[link] = now
        linkMTUs[link] = mtu
        retireCache(on: link)
        caches[link] = RecordCache(limit: configuration.cacheLimitPerLink)
        for id in operations.keys.sorted() { attach(id, to: link) }
        if configuration.publishAddresses { refreshHostPublication() }
        for id in publications.keys.sorted() where id != Self.hostPublication { startPublication(id, on: link) }
    }

    /// This host's addresses on a link changed: the address records are updated and announced again (RFC 6762
    /// §8.4), which is an update of our own data and never a conflict.
    package mutating func updateAddresses(_ link: LinkID, addresses: [LinkAddress], at time: Instant) {
        now = max(now, time)
        guard links[link] != nil, links[link] != addresses else { return }
        links[link] = addresses
        // The host's records on the interface's other family change too (an address record of each family).
        for other in links.keys where other.interfaceIndex == link.interfaceIndex { linkEvents[other] = now }
        if configuration.publishAddresses { refreshHostPublication() }
    }

    /// The MTU of a link's interface changed: later messages with several records fit the new one.
    package mutating func updateMTU(_ link: LinkID, mtu: Int) {
        guard links[link] != nil else { return }
        linkMTUs[link] = mtu
    }

    /// A link went away: goodbyes where they can still be sent, then its cache and questions are dropped.
    package mutating func removeLink(_ link: LinkID, at time: Instant) {
        now = max(now, time)
        guard links[link] != nil else { return }
        sendGoodbyes(for: publications.keys.sorted(), on: link, keepingShared: false)
        flushMulticasts(on: link)
        for id in publications.keys.sorted() {
            publications[id]?.phases[link] = nil
            publications[id]?.records[link] = nil
            publications[id]?.probeSent.remove(link)
        }
        authority.removeLink(link)
        scheduler.removeLink(link)
        let changes = caches[link]?.removeAll() ?? []
        dispatch(changes, on: link)
        retireCache(on: link)
        caches[link] = nil
        querier.removeLink(link)
        failureObserver.removeLink(link)
        reconfirmQueries.removeAll { $0.link == link }
        reconfirmQueriesSent.removeAll { $0.link == link }
        lastUnicastQuestion[link] = nil
        firstProbes[link] = nil
        links[link] = nil
        linkEvents[link] = nil
        linkMTUs[link] = nil
        for id in operations.keys { operations[id]?.forget(link) }
        if configuration.publishAddresses { refreshHostPublication() }
    }

    /// The records cached on a link, this host's own included (for status reports and diagnostics).
    package func cachedRecords(on link: LinkID) -> [CachedRecord] { caches[link]?.allRecords ?? [] }

    /// How many records are cached on a link.
    package func cachedRecordCount(on link: LinkID) -> Int { caches[link]?.count ?? 0 }

    /// Records the caches dropped because they were full (``RecordCache/droppedWhenFull``), on every link since the
    /// engine started, caches since replaced included.
    package var cacheRecordsDroppedWhenFull: Int {
        caches.values.reduce(droppedByRetiredCaches) { $0 + $1.droppedWhenFull }
    }

    /// Counts what a link's cache dropped before it is replaced or removed.
    private mutating func retireCache(on link: LinkID) {
        droppedByRetiredCaches += caches[link]?.droppedWhenFull ?? 0
    }

    /// True when `address` is one of this host's, on any link.
    func isOwnAddress(_ address: IPAddress) -> Bool {
        links.values.contains { addresses in addresses.contains { $0.address == address } }
    }

    /// Ends everything: goodbyes for every published record on every link, then the engine forgets its
    /// publications, operations, questions and caches, and has nothing more to do.
    package mutating func shutdown(at time: Instant) {
        now = max(now, time)
        for link in links.keys.sorted() {
            sendGoodbyes(for: publications.keys.sorted(), on: link, keepingShared: false)
        }
        flushMulticasts()
        isShutDown = true
        publications.removeAll()
        operations.removeAll()
        authority = AuthorityTable()
        scheduler.removeAll()
        failureObserver.removeAll()
        reconfirmQueries.removeAll()
        reconfirmQueriesSent.removeAll()
        for link in links.keys {
            retireCache(on: link)
            caches[link] = RecordCache(limit: configuration.cacheLimitPerLink)
            querier.removeLink(link)
        }
    }
}

/// Counters describing what the engine has done.
package struct EngineStatistics: Sendable, Hashable {
    package var packetsReceived = 0
    package var malformedPackets = 0
    package var packetsSent = 0
    package var queriesSent = 0
    package var responsesSent = 0
    package var conflicts = 0
    /// Unicast replies accepted: answers to our QU questions (first queries and first probes).
    package var unicastResponsesReceived = 0
}
