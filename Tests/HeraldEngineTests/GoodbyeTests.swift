import HeraldEngine
import HeraldWire
import Testing

@Suite("Goodbyes (RFC 6762 §10.1)")
struct GoodbyeTests {
    let printer = Fixture.instance("Printer")

    /// The records host 0 multicast with TTL 0 after `time`.
    func goodbyes(_ lan: SimulatedLAN, after time: Instant) -> [ResourceRecord] {
        lan.multicastResponses(from: 0).filter { $0.time >= time }.flatMap(\.message.answers).filter { $0.ttl == 0 }
    }

    @Test("a withdrawn service says goodbye with TTL 0 for every one of its records, and nothing else")
    func withdrawal() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let registration = ServiceRegistration(
            instance: "Printer", type: Fixture.ippType, subtypes: ["_universal"], port: 631)
        lan.with(alpha) { $0.register(OperationID(1), registration, at: $1) }
        lan.run(for: 5000)
        let cancelledAt = lan.now
        lan.with(alpha) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 3000)
        let sent = lan.packets(from: alpha).filter { $0.time >= cancelledAt }
        #expect(sent.allSatisfy { $0.message.answers.allSatisfy { $0.ttl == 0 } })
        let gone = goodbyes(lan, after: cancelledAt)
        #expect(
            Set(gone.map { "\($0.name) \($0.type)" }) == [
                "\(printer) SRV", "\(printer) TXT", "\(printer) NSEC", "_ipp._tcp.local. PTR",
                "_services._dns-sd._udp.local. PTR", "_universal._sub._ipp._tcp.local. PTR",
            ])
        #expect(lan.registrations(of: alpha, OperationID(1)).count == 1)
        // It is no longer answered.
        let askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .srv)]), from: SimulatedLAN.peer(1))
        lan.run(for: 1000)
        #expect(lan.packets(from: alpha).filter { $0.time > askedAt }.isEmpty)
    }

    @Test("after a goodbye a peer's cache keeps nothing of the service, not even the NSEC that came with its answers")
    func peerCacheEmptiesAfterGoodbye() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        var before = 0
        lan.with(beta) { engine, _ in before = engine.cachedRecordCount(on: SimulatedLAN.ipv4Link) }
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.with(beta) { $0.resolve(OperationID(2), instance: printer, at: $1) }
        lan.run(for: 5000)
        var cached: [CachedRecord] = []
        lan.with(beta) { engine, _ in cached = engine.cachedRecords(on: SimulatedLAN.ipv4Link) }
        #expect(cached.contains { $0.record.name == printer && $0.record.type == .nsec }, "the answers carried an NSEC")
        lan.with(beta) { $0.cancel(OperationID(2), at: $1) }
        lan.with(alpha) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 2000)
        lan.with(beta) { engine, _ in cached = engine.cachedRecords(on: SimulatedLAN.ipv4Link) }
        #expect(!cached.contains { $0.record.name == printer }, "\(cached.map(\.record))")
        #expect(cached.count == before, "\(cached.map(\.record))")
    }

    @Test("withdrawing one of two services of a type keeps the type's shared enumeration record alive")
    func sharedRecordOutlivesOneOwner() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("One"), at: $1)
            $0.register(OperationID(2), Fixture.service("Two", port: 632), at: $1)
            $0.browse(OperationID(4), type: Fixture.serviceTypes, at: $1)
        }
        lan.with(beta) { $0.browse(OperationID(3), type: Fixture.serviceTypes, at: $1) }
        lan.run(for: 5000)
        let cancelledAt = lan.now
        lan.with(alpha) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 5000)
        #expect(!goodbyes(lan, after: cancelledAt).contains { $0.name == Fixture.serviceTypes })
        let link = SimulatedLAN.ipv4Link
        #expect(lan.events(of: beta, OperationID(3)).map(\.event) == [.instanceAdded(Fixture.ippType, link)])
        #expect(lan.events(of: alpha, OperationID(4)).map(\.event) == [.instanceAdded(Fixture.ippType, link)])
        // Withdrawing the last one does say goodbye for it.
        let lastAt = lan.now
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        lan.run(for: 3000)
        #expect(goodbyes(lan, after: lastAt).contains { $0.name == Fixture.serviceTypes })
        #expect(lan.events(of: beta, OperationID(3)).map(\.event).last == .instanceRemoved(Fixture.ippType, link))
    }

    @Test("a goodbye or a short TTL for one of our records, sent by another host, is answered by announcing it again")
    func understatedRecordRefreshed() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.with(beta) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.run(for: 10_000)
        let ptr = Fixture.ptr(Fixture.ippType, printer)
        var sentAt = lan.now + lan.latency
        lan.inject(.response([ptr.with(ttl: 0)]), from: SimulatedLAN.peer(1))
        lan.run(for: 3000)
        let again = try #require(
            lan.multicastResponses(from: alpha, containing: Fixture.ippType).first { $0.time >= sentAt })
        #expect((20...120).contains(again.time - sentAt))
        #expect(again.message.answers.contains { $0.data == .ptr(printer) && $0.ttl == 4500 })
        // The browser never lost the service: the announcement came within the goodbye's one-second grace.
        #expect(lan.events(of: beta, OperationID(2)).map(\.event) == [.instanceAdded(printer, SimulatedLAN.ipv4Link)])
        // A TTL of at least half ours needs nothing.
        sentAt = lan.now + lan.latency
        lan.inject(.response([ptr.with(ttl: 2250)]), from: SimulatedLAN.peer(1))
        lan.run(for: 500)
        #expect(lan.multicastResponses(from: alpha, containing: Fixture.ippType).filter { $0.time >= sentAt }.isEmpty)
    }

    @Test("removing a link sends goodbyes for everything announced on it first")
    func removeLink() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.with(beta) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.run(for: 5000)
        let removedAt = lan.now
        lan.removeLink(of: alpha, SimulatedLAN.ipv4Link)
        lan.run(for: 3000)
        let gone = goodbyes(lan, after: removedAt)
        #expect(gone.contains { $0.name == printer && $0.type == .srv })
        #expect(gone.contains { $0.name == "alpha.local." && $0.type == .a })
        let removed = try #require(lan.events(of: beta, OperationID(2)).last)
        #expect(removed.event == .instanceRemoved(printer, SimulatedLAN.ipv4Link))
        #expect(removed.time - removedAt == 1000 + lan.latency)
    }

    @Test("shutdown says goodbye for every record, then the engine stays silent")
    func shutdown() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Printer"), at: $1)
            $0.browse(OperationID(3), type: "_http._tcp.local.", at: $1)
        }
        lan.with(beta) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.run(for: 5000)
        let stoppedAt = lan.now
        lan.with(alpha) { $0.shutdown(at: $1) }
        let gone = goodbyes(lan, after: stoppedAt)
        #expect(Set(gone.map(\.type)) == [.srv, .txt, .ptr, .a, .nsec])
        #expect(gone.contains { $0.name == "1.0.0.10.in-addr.arpa." })
        let packetsAtShutdown = lan.packets(from: alpha).count
        lan.inject(
            .query([Fixture.question(printer, .srv), Fixture.question("alpha.local.", .a)]), from: SimulatedLAN.peer(1))
        lan.inject(.response([Fixture.a("gamma.local.", IPv4Address(10, 0, 0, 3))]), from: SimulatedLAN.peer(1))
        lan.run(for: 60_000)
        #expect(lan.packets(from: alpha).count == packetsAtShutdown)
        #expect(lan.hosts[alpha].engine.nextDeadline == nil)
        #expect(
            lan.events(of: beta, OperationID(2)).map(\.event).last == .instanceRemoved(printer, SimulatedLAN.ipv4Link))
    }
}
