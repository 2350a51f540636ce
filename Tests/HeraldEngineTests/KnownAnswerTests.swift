import HeraldEngine
import HeraldWire
import Testing

@Suite("Known-answer and duplicate answer suppression (RFC 6762 §7)")
struct KnownAnswerTests {
    let printer = Fixture.instance("Printer")
    let peer = SimulatedLAN.peer(1)

    func established(seed: UInt64 = 1) -> SimulatedLAN {
        var lan = SimulatedLAN(seed: seed)
        let alpha = lan.addHost("alpha", seed: seed &+ 100)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 10_000)
        return lan
    }

    func responses(_ lan: SimulatedLAN, after time: Instant) -> [(
        time: Instant, message: DNSMessage, destination: PacketDestination
    )] {
        lan.packets(from: 0).filter { $0.time > time && $0.message.isResponse }
    }

    @Test("a known answer with at least half the true TTL suppresses the answer")
    func halfTTLSuppresses() {
        var lan = established()
        let before = lan.now
        // The PTR's true TTL is 4500 s; 2250 is exactly half.
        lan.inject(
            .query(
                [Fixture.question(Fixture.ippType, .ptr)],
                knownAnswers: [Fixture.ptr(Fixture.ippType, printer, ttl: 2250)]),
            from: peer)
        // The SRV's is 120 s; 60 is half. No NSEC either: the record exists, the asker has it.
        lan.inject(
            .query(
                [Fixture.question(printer, .srv)],
                knownAnswers: [Fixture.srv(printer, port: 631, target: "alpha.local.", ttl: 60).with(cacheFlush: false)]
            ),
            from: SimulatedLAN.peer(2), after: 1500)
        lan.run(for: 3000)
        #expect(responses(lan, after: before).isEmpty)
    }

    @Test("a known answer with less than half the true TTL does not suppress it (Avahi gets this wrong)")
    func belowHalfTTLAnswers() throws {
        var lan = established()
        var before = lan.now
        lan.inject(
            .query(
                [Fixture.question(Fixture.ippType, .ptr)],
                knownAnswers: [Fixture.ptr(Fixture.ippType, printer, ttl: 2249)]),
            from: peer)
        lan.run(for: 1500)
        let ptr = try #require(responses(lan, after: before).first)
        #expect(ptr.message.answers.contains { $0.data == .ptr(printer) && $0.ttl == 4500 })
        before = lan.now
        lan.inject(
            .query(
                [Fixture.question(printer, .srv)],
                knownAnswers: [Fixture.srv(printer, port: 631, target: "alpha.local.", ttl: 59).with(cacheFlush: false)]
            ),
            from: peer)
        lan.run(for: 1500)
        let srv = try #require(responses(lan, after: before).first)
        #expect(srv.message.answers.map(\.type) == [.srv])
    }

    @Test("a known answer with other data, or another name, suppresses nothing")
    func differentKnownAnswer() throws {
        var lan = established()
        let before = lan.now
        lan.inject(
            .query(
                [Fixture.question(Fixture.ippType, .ptr)],
                knownAnswers: [Fixture.ptr(Fixture.ippType, Fixture.instance("Other"))]), from: peer)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).first?.message.answers.contains { $0.data == .ptr(printer) } == true)
    }

    @Test("a known answer with the largest TTL suppresses without overflow; one with the top bit set counts as TTL 0")
    func hugeKnownAnswerTTL() {
        var lan = established()
        var before = lan.now
        lan.inject(
            .query(
                [Fixture.question(Fixture.ippType, .ptr)],
                knownAnswers: [Fixture.ptr(Fixture.ippType, printer, ttl: 0x7FFF_FFFF)]), from: peer)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).isEmpty)
        // RFC 2181 §8: a TTL of 2^31 or more is read as 0, which suppresses nothing.
        before = lan.now
        lan.inject(
            .query(
                [Fixture.question(Fixture.ippType, .ptr)],
                knownAnswers: [Fixture.ptr(Fixture.ippType, printer, ttl: .max)]),
            from: peer)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).first?.message.answers.contains { $0.data == .ptr(printer) } == true)
    }

    @Test(
        "multi-packet known answers: a TC query is answered after 400–500 ms, minus what later packets from the same host list"
    )
    func multiPacketKnownAnswers() throws {
        // The continuation from the same host lists the answer: nothing is sent.
        var lan = established()
        var before = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)], truncated: true), from: peer)
        lan.inject(.query([], knownAnswers: [Fixture.ptr(Fixture.ippType, printer)]), from: peer, after: 50)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).isEmpty)

        // The same list from another host does not count for this query.
        lan = established()
        before = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)], truncated: true), from: peer)
        lan.inject(
            .query([], knownAnswers: [Fixture.ptr(Fixture.ippType, printer)]), from: SimulatedLAN.peer(2), after: 50)
        lan.run(for: 1500)
        let answer = try #require(responses(lan, after: before).first)
        #expect((400...500).contains(answer.time - (before + lan.latency)))
        #expect(answer.message.answers.contains { $0.data == .ptr(printer) })
    }

    @Test("another TC continuation extends the wait to 400–500 ms after the last packet")
    func truncatedContinuationExtendsDelay() throws {
        var lan = established()
        let before = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)], truncated: true), from: peer)
        lan.inject(
            .query([], knownAnswers: [Fixture.ptr(Fixture.ippType, Fixture.instance("Other"))], truncated: true),
            from: peer, after: 300)
        lan.run(for: 2000)
        let answer = try #require(responses(lan, after: before).first)
        let lastPacket = before + 300 + lan.latency
        #expect(
            (400...500).contains(answer.time - lastPacket),
            "answered \(answer.time - lastPacket) ms after the last packet")
    }

    @Test(
        "duplicate answer suppression: an answer another responder multicasts first, with a TTL not below ours, is not sent again"
    )
    func duplicateAnswerSuppression() throws {
        var lan = established()
        var before = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer)
        // A cooperating responder answers with the same record 5 ms later, before our 20–120 ms delay ends.
        lan.inject(.response([Fixture.ptr(Fixture.ippType, printer, ttl: 4500)]), from: SimulatedLAN.peer(2), after: 5)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).isEmpty)

        // With a lower TTL than ours, ours still goes out.
        lan.run(for: 2000)
        before = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer)
        lan.inject(.response([Fixture.ptr(Fixture.ippType, printer, ttl: 4000)]), from: SimulatedLAN.peer(2), after: 5)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).count == 1)
    }

    @Test("records in a query's known-answer list are never cached")
    func knownAnswersNotCached() {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        lan.inject(
            .query([Fixture.question(Fixture.ippType, .ptr)], knownAnswers: [Fixture.ptr(Fixture.ippType, printer)]),
            from: peer, after: 10)
        lan.run(for: 2000)
        #expect(lan.events(of: beta, OperationID(1)).isEmpty)
    }
}
