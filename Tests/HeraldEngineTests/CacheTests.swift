import HeraldEngine
import HeraldWire
import Testing

@Suite("The record cache (RFC 6762 §10)")
struct CacheTests {
    let peer = SimulatedLAN.peer(1)
    let name: DNSName = "gamma.local."

    /// A host with a query for `gamma.local. A` whose events show the cache's changes.
    func watching() -> SimulatedLAN {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { $0.query(OperationID(1), name: name, type: .a, at: $1) }
        lan.run(for: 500)
        return lan
    }

    /// `watching()` with a peer's A record of the name cached (TTL 4500 s) five seconds ago, for the passive
    /// observation tests.
    func watchingCachedRecord() -> SimulatedLAN {
        var lan = watching()
        lan.inject(.response([cachedRecord]), from: peer)
        lan.run(for: 5000)
        return lan
    }

    var cachedRecord: ResourceRecord { Fixture.a(name, IPv4Address(10, 0, 0, 50), ttl: 4500) }

    func changes(_ lan: SimulatedLAN) -> [(time: Instant, added: Bool, address: IPv4Address)] {
        lan.events(of: 0, OperationID(1)).compactMap { entry in
            switch entry.event {
            case .recordAdded(let record, _): if case .a(let v4) = record.data { return (entry.time, true, v4) }
            case .recordRemoved(let record, _): if case .a(let v4) = record.data { return (entry.time, false, v4) }
            default: break
            }
            return nil
        }
    }

    @Test("a record leaves the cache when its TTL runs out")
    func expiry() {
        var lan = watching()
        let receivedAt = lan.now + lan.latency
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50), ttl: 30)]), from: peer)
        lan.run(for: 40_000)
        let seen = changes(lan)
        #expect(seen.map(\.added) == [true, false])
        #expect(seen.map { $0.time - receivedAt } == [0, 30_000])
    }

    @Test("a goodbye (TTL 0) removes the record one second later")
    func goodbye() {
        var lan = watching()
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50))]), from: peer)
        lan.run(for: 5000)
        let goodbyeAt = lan.now + lan.latency
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50), ttl: 0)]), from: peer)
        lan.run(for: 3000)
        let removed = changes(lan).filter { !$0.added }
        #expect(removed.map { $0.time - goodbyeAt } == [1000])
    }

    @Test(
        "a TTL with its top bit set counts as 0 (RFC 2181 §8): the record is never cached, and a cached one says goodbye"
    )
    func topBitTTLIsZero() {
        var lan = watching()
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 60), ttl: 0xFFFF_FFFF)]), from: peer)
        lan.run(for: 3000)
        #expect(changes(lan).isEmpty, "a record announced with TTL 2^32 - 1 must not be cached")
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50))]), from: peer)
        lan.run(for: 5000)
        let goodbyeAt = lan.now + lan.latency
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50), ttl: 0x8000_0000)]), from: peer)
        lan.run(for: 3000)
        let seen = changes(lan)
        #expect(seen.map(\.added) == [true, false])
        #expect(seen.last.map { $0.time - goodbyeAt } == 1000)
    }

    @Test(
        "a cache-flush record flushes same-set records older than one second, one second later, and keeps younger ones")
    func cacheFlush() {
        var lan = watching()
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50))]), from: peer)
        // Half a second later another member of the set arrives with the cache-flush bit: the first is too young to go.
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 51))]), from: peer, after: 500)
        lan.run(for: 3000)
        #expect(changes(lan).allSatisfy { $0.added })
        #expect(changes(lan).count == 2)
        // Three seconds in, a third: both older ones go one second later; a shared (no flush bit) one flushes nothing.
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 53), flush: false)]), from: peer)
        lan.run(for: 2000)
        #expect(changes(lan).allSatisfy { $0.added })
        let flushAt = lan.now + lan.latency
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 52))]), from: peer)
        lan.run(for: 3000)
        let removed = changes(lan).filter { !$0.added }
        #expect(
            Set(removed.map(\.address)) == [
                IPv4Address(10, 0, 0, 50), IPv4Address(10, 0, 0, 51), IPv4Address(10, 0, 0, 53),
            ])
        #expect(removed.allSatisfy { $0.time - flushAt == 1000 })
    }

    @Test(
        "passive observation of failures: two queries for a cached record without an answer within ten seconds flush it"
    )
    func passiveObservation() {
        var lan = watching()
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50))]), from: peer)
        lan.run(for: 5000)
        let firstQuery = lan.now + lan.latency
        let ask = DNSMessage.query([Fixture.question(name, .a)])
        lan.inject(ask, from: SimulatedLAN.peer(2))
        lan.inject(ask, from: SimulatedLAN.peer(2), after: 1000)
        lan.run(for: 15_000)
        let removed = changes(lan).filter { !$0.added }
        #expect(removed.map { $0.time - firstQuery } == [10_000])
    }

    @Test(
        "passive observation counts only queries whose answers would be multicast: not QU questions, truncated queries or queries sent to this host"
    )
    func passiveObservationMulticastOnly() {
        var lan = watchingCachedRecord()
        // The owner answers a QU question by unicast, to the asker alone: this host never sees the answer.
        let qu = DNSMessage.query([Fixture.question(name, .a, qu: true)])
        lan.inject(qu, from: SimulatedLAN.peer(2))
        lan.inject(qu, from: SimulatedLAN.peer(2), after: 1000)
        lan.run(for: 15_000)
        // A truncated query's known answers, which may list the record, come in the packets after it.
        let truncated = DNSMessage.query([Fixture.question(name, .a)], truncated: true)
        lan.inject(truncated, from: SimulatedLAN.peer(2))
        lan.inject(truncated, from: SimulatedLAN.peer(2), after: 1000)
        lan.run(for: 15_000)
        // A query sent to this host's address is answered by unicast too.
        let direct = DNSMessage.query([Fixture.question(name, .a)])
        lan.inject(direct, from: SimulatedLAN.peer(2), to: 0, toUnicast: true)
        lan.inject(direct, from: SimulatedLAN.peer(2), to: 0, toUnicast: true, after: 1000)
        lan.run(for: 15_000)
        #expect(changes(lan).filter { !$0.added }.isEmpty)
    }

    @Test("passive observation: a record among a long known-answer list is known, wherever it stands in it")
    func passiveObservationLongKnownAnswerList() {
        var lan = watchingCachedRecord()
        var listed = cachedRecord
        listed.cacheFlush = false
        let others = (0..<40).map { Fixture.a(name, IPv4Address(10, 0, 1, UInt8($0)), ttl: 4500, flush: false) }
        for position in [0, 20, 40] {
            var knownAnswers = others
            knownAnswers.insert(listed, at: position)
            let query = DNSMessage.query([Fixture.question(name, .a)], knownAnswers: knownAnswers)
            lan.inject(query, from: SimulatedLAN.peer(2))
            lan.inject(query, from: SimulatedLAN.peer(2), after: 1000)
            lan.run(for: 15_000)
        }
        #expect(changes(lan).filter { !$0.added }.isEmpty)
    }

    @Test("passive observation: one query counts once for a record, however many of its questions ask for it")
    func passiveObservationRepeatedQuestion() {
        var lan = watchingCachedRecord()
        lan.inject(
            .query(Array(repeating: Fixture.question(name, .a), count: 50) + [Fixture.question(name, .any)]),
            from: SimulatedLAN.peer(2))
        lan.run(for: 15_000)
        #expect(changes(lan).filter { !$0.added }.isEmpty)
    }

    @Test("passive observation: an answer seen in time, or queries far apart, keep the record")
    func passiveObservationKept() {
        var lan = watchingCachedRecord()
        let ask = DNSMessage.query([Fixture.question(name, .a)])
        lan.inject(ask, from: SimulatedLAN.peer(2))
        lan.inject(ask, from: SimulatedLAN.peer(2), after: 1000)
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50), ttl: 4500)]), from: peer, after: 1050)
        lan.run(for: 15_000)
        // Queries that list the record as a known answer do not count either.
        lan.inject(
            .query(
                [Fixture.question(name, .a)], knownAnswers: [Fixture.a(name, IPv4Address(10, 0, 0, 50), flush: false)]),
            from: SimulatedLAN.peer(2))
        lan.inject(
            .query(
                [Fixture.question(name, .a)], knownAnswers: [Fixture.a(name, IPv4Address(10, 0, 0, 50), flush: false)]),
            from: SimulatedLAN.peer(2), after: 1000)
        lan.run(for: 15_000)
        // Two unanswered queries 30 s apart are not two within ten seconds.
        lan.inject(ask, from: SimulatedLAN.peer(2))
        lan.inject(ask, from: SimulatedLAN.peer(2), after: 30_000)
        lan.run(for: 45_000)
        #expect(changes(lan).filter { !$0.added }.isEmpty)
    }

    @Test("a unicast response is ignored unless it answers a QU question this host asked within two seconds")
    func unsolicitedUnicastIgnored() {
        var lan = watching()
        // The query's first question asked for unicast replies (nothing was cached); two seconds later only
        // multicast (QM) retransmissions have gone out.
        #expect(lan.queries(from: 0).first?.message.questions.first?.unicastResponse == true)
        lan.run(for: 2000)
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50))]), from: peer, to: 0, toUnicast: true)
        lan.run(for: 3000)
        #expect(changes(lan).isEmpty)
        #expect(lan.hosts[0].engine.cachedRecords(on: SimulatedLAN.ipv4Link).allSatisfy { $0.record.name != name })
        // The same packet multicast is taken.
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 50))]), from: peer)
        lan.run(for: 100)
        #expect(changes(lan).map(\.added) == [true])
    }

    @Test("a record refreshed before the cache fills up still expires (or goes first) when room is made around it")
    func refreshedRecordStillExpires() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.cacheLimitPerLink = 12 }
        lan.run(for: 3000)
        let short = Fixture.a("short.local.", IPv4Address(10, 0, 0, 70), ttl: 10)
        lan.inject(.response([short]), from: peer)
        lan.run(for: 5000)
        lan.inject(.response([short]), from: peer)  // refreshed: it now expires five seconds later than first planned
        lan.run(for: 10)
        let room = 12 - lan.hosts[beta].engine.cachedRecordCount(on: SimulatedLAN.ipv4Link)
        for n in 0...room {  // one more than fits
            lan.inject(
                .response([Fixture.a(try DNSName("long-\(n).local."), IPv4Address(10, 0, 1, UInt8(n)), ttl: 100)]),
                from: peer)
        }
        lan.run(for: 10)
        #expect(lan.hosts[beta].engine.cachedRecordCount(on: SimulatedLAN.ipv4Link) == 12)
        lan.run(for: 200_000)
        let left = lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link)
        #expect(left.allSatisfy { $0.isLocal }, "\(left.filter { !$0.isLocal }.map(\.record))")
    }

    @Test(
        "a flood of 50,000 distinct records keeps the cache at its limit, evicting the junk closest to expiry, never this host's own records"
    )
    func boundedCache() throws {
        let limit = 2000
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.cacheLimitPerLink = limit }
        lan.with(beta) {
            $0.register(OperationID(1), Fixture.service("Mine"), at: $1)
            $0.browse(OperationID(2), type: Fixture.ippType, at: $1)
        }
        lan.run(for: 5000)
        // A record somebody uses, with a long life.
        let keeper = Fixture.a("keeper.local.", IPv4Address(10, 0, 0, 60), ttl: 4500)
        lan.inject(.response([keeper]), from: peer)
        lan.run(for: 10)
        let ownCount = lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link).filter(\.isLocal).count
        #expect(ownCount >= 6)
        // The flood: 50,000 names with TTLs from 10 s to about 4100 s, 200 every half second (within what the cache
        // lets junk take others' places: a quarter of its limit a second).
        var expiries: [DNSName: Instant] = [:]
        var batch: [ResourceRecord] = []
        for n in 0..<50_000 {
            let junk = try DNSName("junk-\(n).local.")
            let ttl = UInt32(10 + (n &* 7919) % 4090)
            batch.append(Fixture.a(junk, IPv4Address(UInt32(0x0A01_0000 + n)), ttl: ttl))
            if batch.count == 200 {
                lan.inject(.response(batch), from: peer)
                lan.run(for: 1)
                for record in batch { expiries[record.name] = lan.now + Int(record.ttl) * 1000 }
                lan.run(for: 499)
                batch = []
            }
        }
        lan.run(for: 10)
        // Every one of the 50,000 beyond what fits was dropped (evicted, or refused), and is counted as dropped.
        let droppedByFlood = lan.hosts[beta].engine.cacheRecordsDroppedWhenFull
        #expect(droppedByFlood >= 50_000 - limit)
        // Once full, a newcomer nobody asks for that would expire before everything cached is the junk: refused.
        lan.inject(.response([Fixture.a("short.local.", IPv4Address(10, 0, 0, 61), ttl: 5)]), from: peer)
        lan.run(for: 10)
        #expect(lan.hosts[beta].engine.cacheRecordsDroppedWhenFull == droppedByFlood + 1)
        #expect(
            !lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link).contains {
                $0.record.name == "short.local."
            })
        // A record an operation asks for still gets in, although all the junk outlives it.
        let other = Fixture.instance("Other")
        lan.with(beta) { $0.resolve(OperationID(3), instance: other, at: $1) }
        lan.inject(
            .response([
                Fixture.srv(other, port: 80, target: "keeper.local.", ttl: 120),
                ResourceRecord(name: other, ttl: 120, data: .txt(.empty), cacheFlush: true),
            ]), from: peer)
        lan.run(for: 10)
        #expect(
            lan.events(of: beta, OperationID(3)).contains { entry in
                if case .resolved(let service) = entry.event {
                    return service.port == 80 && service.addresses == [.v4(IPv4Address(10, 0, 0, 60))]
                }
                return false
            })
        let cached = lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link)
        #expect(lan.hosts[beta].engine.cachedRecordCount(on: SimulatedLAN.ipv4Link) == limit)
        #expect(cached.count == limit)
        #expect(cached.filter(\.isLocal).count == ownCount)
        #expect(cached.contains { $0.record == keeper })
        // The survivors are the junk that lives longest: none of the junk dropped would have outlived any kept.
        let kept = cached.compactMap { expiries[$0.record.name] }
        let keptJunk = Set(cached.map(\.record.name)).intersection(expiries.keys)
        let droppedLongest = expiries.filter { !keptJunk.contains($0.key) }.map(\.value).max() ?? .zero
        #expect(!kept.isEmpty)
        #expect(kept.min()! >= droppedLongest)
        // The host's own service is still browsable and was never reported gone.
        #expect(
            lan.events(of: beta, OperationID(2)).map(\.event) == [
                .instanceAdded(Fixture.instance("Mine"), SimulatedLAN.ipv4Link)
            ])
        // Expiry of the survivors still works: they are all gone after their TTL.
        lan.run(for: 4200_000)
        let left = lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link)
        #expect(left.allSatisfy { $0.isLocal || $0.record == keeper || $0.record.name == other })
        #expect(left.filter(\.isLocal).count == ownCount)
    }

    @Test(
        "a full cache evicting records a browse was told of does not report them removed: a full cache is no news about the network"
    )
    func evictionIsNoGoodbye() throws {
        let limit = 40
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.cacheLimitPerLink = limit }
        lan.run(for: 3000)
        let types = try (0..<5).map { try DNSName("_type\($0)._tcp.local.") }
        lan.with(beta) { engine, now in
            for (n, type) in types.enumerated() { engine.browse(OperationID(UInt64(n + 1)), type: type, at: now) }
        }
        lan.run(for: 1000)
        // A hundred instances of five types, more than the cache holds: every one is asked for, so the later types'
        // push out the earlier ones'.
        for type in types {
            let batch = try (0..<20).map { Fixture.ptr(type, try type.prepending(label: "Instance \($0)")) }
            lan.inject(.response(batch), from: peer)
            lan.run(for: 10)
        }
        lan.run(for: 10_000)
        #expect(lan.hosts[beta].engine.cacheRecordsDroppedWhenFull >= 60)
        let events = (1...5).flatMap { lan.events(of: beta, OperationID(UInt64($0))).map(\.event) }
        let added = events.filter { if case .instanceAdded = $0 { return true } else { return false } }
        #expect(added.count == 100)
        #expect(!events.contains { if case .instanceRemoved = $0 { return true } else { return false } })
    }
}

@Suite("A shared record this host and a peer both publish")
struct SharedRecordOwnershipTests {
    let alpha = 0, beta = 1
    let typeRecord = ResourceRecord(name: Fixture.serviceTypes, ttl: 4500, data: .ptr(Fixture.ippType))

    /// A printer service registered on `host` (operation 1 on beta, 2 on alpha), which publishes `typeRecord`.
    func registerPrinter(on host: Int, in lan: inout SimulatedLAN) {
        let (id, name) = host == alpha ? (OperationID(2), "Alpha Printer") : (OperationID(1), "Beta Printer")
        lan.with(host) { $0.register(id, Fixture.service(name), at: $1) }
    }

    /// Alpha's cached copies of `typeRecord` (this host's own, or a peer's).
    func typeRecordCopies(_ lan: SimulatedLAN) -> [CachedRecord] {
        lan.hosts[alpha].engine.cachedRecords(on: SimulatedLAN.ipv4Link).filter {
            $0.record.hasSameData(as: typeRecord)
        }
    }

    /// Alpha and beta on one link, past their start-up.
    func twoHosts() -> SimulatedLAN {
        var lan = SimulatedLAN()
        lan.addHost("alpha")
        lan.addHost("beta")
        lan.run(for: 3000)
        return lan
    }

    func typesBrowsed(_ lan: SimulatedLAN) -> Set<DNSName> {
        var present = Set<DNSName>()
        for entry in lan.events(of: alpha, OperationID(3)) {
            switch entry.event {
            case .instanceAdded(let name, _): present.insert(name)
            case .instanceRemoved(let name, _): present.remove(name)
            default: break
            }
        }
        return present
    }

    @Test(
        "heard from a peer first, then published here: it becomes this host's own, listed as a known answer with its full TTL"
    )
    func peerRecordTakenOver() {
        var lan = twoHosts()
        // Beta's registration announces `_services._dns-sd._udp.local. PTR _ipp._tcp.local.`; alpha caches it, then
        // registers a service of the same type and so publishes the same record.
        registerPrinter(on: beta, in: &lan)
        lan.run(for: 3000)
        registerPrinter(on: alpha, in: &lan)
        lan.run(for: 3000)
        let cached = typeRecordCopies(lan)
        #expect(cached.count == 1 && cached.allSatisfy(\.isLocal), "\(cached)")

        // A browse of the service types lists it as a known answer: the whole TTL, as this host publishes it.
        let browseStart = lan.now
        lan.with(alpha) { $0.browse(OperationID(3), type: Fixture.serviceTypes, at: $1) }
        lan.run(for: 5000)
        #expect(typesBrowsed(lan) == [Fixture.ippType])
        let listed = lan.queries(from: alpha).filter { $0.time >= browseStart }.flatMap(\.message.answers)
            .filter { $0.hasSameData(as: typeRecord) }
        #expect(!listed.isEmpty && listed.allSatisfy { $0.ttl == 4500 }, "\(listed)")

        // Withdrawn here, alpha's copy goes with the registration; beta still publishes it, so beta's copy stays in
        // alpha's cache as a peer's record, and the browse never sees the type go.
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        lan.run(for: 3000)
        let after = typeRecordCopies(lan)
        #expect(after.count == 1 && after.allSatisfy { !$0.isLocal }, "\(after)")
        lan.run(for: 60_000)
        #expect(typesBrowsed(lan) == [Fixture.ippType])
        let removals = lan.events(of: alpha, OperationID(3)).filter {
            if case .instanceRemoved(let name, _) = $0.event { return name == Fixture.ippType } else { return false }
        }
        #expect(removals.isEmpty, "the browse saw the type go although beta publishes it: \(removals)")
    }

    func removals(of type: DNSName, in lan: SimulatedLAN) -> [Instant] {
        lan.events(of: alpha, OperationID(3)).compactMap { entry in
            if case .instanceRemoved(let name, _) = entry.event, name == type { return entry.time } else { return nil }
        }
    }

    @Test("published here first, then by a peer: when this host withdraws its copy, the peer's stays")
    func peerPublishesAfterThisHost() {
        var lan = twoHosts()
        registerPrinter(on: alpha, in: &lan)
        lan.run(for: 3000)
        lan.with(alpha) { $0.browse(OperationID(3), type: Fixture.serviceTypes, at: $1) }
        registerPrinter(on: beta, in: &lan)
        lan.run(for: 5000)
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        lan.run(for: 60_000)
        #expect(typesBrowsed(lan) == [Fixture.ippType])
        #expect(removals(of: Fixture.ippType, in: lan).isEmpty)
        let cached = typeRecordCopies(lan)
        #expect(cached.count == 1 && cached.allSatisfy { !$0.isLocal }, "\(cached)")
    }

    @Test(
        "a peer that says goodbye while this host publishes the record too is not brought back when this host withdraws"
    )
    func peerGoodbyeIsRemembered() {
        var lan = twoHosts()
        registerPrinter(on: beta, in: &lan)
        lan.run(for: 3000)
        registerPrinter(on: alpha, in: &lan)
        lan.with(alpha) { $0.browse(OperationID(3), type: Fixture.serviceTypes, at: $1) }
        lan.run(for: 5000)
        lan.with(beta) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 5000)
        #expect(removals(of: Fixture.ippType, in: lan).isEmpty, "alpha still publishes the type")
        let withdrawn = lan.now
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        lan.run(for: 5000)
        let gone = removals(of: Fixture.ippType, in: lan)
        #expect(gone.count == 1 && gone.allSatisfy { $0 >= withdrawn }, "\(gone)")
        #expect(typesBrowsed(lan).isEmpty)
        #expect(typeRecordCopies(lan).isEmpty)
    }

    @Test("a peer's copy heard while this host still probes its own is cached, and stays when this host withdraws")
    func peerCopyHeardWhileProbing() {
        var lan = twoHosts()
        registerPrinter(on: alpha, in: &lan)
        lan.run(for: 100)
        // Alpha holds the record in its authority but has not announced it: a scripted peer announces it now, once.
        lan.inject(.response([typeRecord]), from: SimulatedLAN.peer(1))
        lan.run(for: 3000)
        lan.with(alpha) { $0.browse(OperationID(3), type: Fixture.serviceTypes, at: $1) }
        lan.run(for: 2000)
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        lan.run(for: 10_000)
        #expect(typesBrowsed(lan) == [Fixture.ippType])
        #expect(removals(of: Fixture.ippType, in: lan).isEmpty)
    }

    @Test(
        "a unique record of this host heard back from elsewhere (a reflector) is an echo: it goes when this host withdraws"
    )
    func uniqueEchoIsNotKept() throws {
        var lan = twoHosts()
        registerPrinter(on: alpha, in: &lan)
        lan.run(for: 3000)
        let srv = try #require(
            lan.hosts[alpha].engine.cachedRecords(on: SimulatedLAN.ipv4Link)
                .first { $0.isLocal && $0.record.type == .srv }?.record)
        #expect(srv.cacheFlush)
        lan.inject(.response([srv]), from: SimulatedLAN.peer(1))
        lan.run(for: 1000)
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        lan.run(for: 3000)
        #expect(!lan.hosts[alpha].engine.cachedRecords(on: SimulatedLAN.ipv4Link).contains { $0.record.type == .srv })
    }

    @Test("a peer's copy that ended before this host withdraws its own is not brought back")
    func expiredPeerCopyStaysGone() {
        var cache = RecordCache(limit: 100)
        let now = Instant.zero
        _ = cache.insert(
            ResourceRecord(name: Fixture.serviceTypes, ttl: 2, data: .ptr(Fixture.ippType)),
            at: now)
        _ = cache.insert(typeRecord, at: now + 500, isLocal: true)
        // The peer's copy would have ended at 2 s; this host withdraws its own at 5 s.
        let changes = cache.removeLocal(typeRecord, at: now + 5000)
        #expect(changes.count == 1 && cache.count == 0, "\(changes)")
    }
}
