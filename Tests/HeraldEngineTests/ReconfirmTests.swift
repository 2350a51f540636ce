import HeraldEngine
import HeraldWire
import Testing

@Suite("Reconfirming a cached record an app found not to work (RFC 6762 §10.4)")
struct ReconfirmTests {
    let peer = SimulatedLAN.peer(1)
    let name: DNSName = "gamma.local."
    let address = IPv4Address(10, 0, 0, 50)
    let beta = 0

    /// Beta follows `gamma.local. A`, which a scripted peer announced (TTL 120 s); the peer answers queries for it
    /// when `answers` says so.
    func lan(answers: Bool) -> SimulatedLAN {
        var lan = SimulatedLAN()
        lan.addHost("beta")
        lan.run(for: 3000)
        let record = Fixture.a(name, address)
        if answers {
            let name = self.name
            lan.reactors.append { packet in
                guard let message = packet.message, !message.isResponse,
                    message.questions.contains(where: { $0.name == name && $0.type == .a })
                else { return [] }
                return [
                    SimulatedLAN.Injection(
                        bytes: DNSMessage.response([record]).wire, source: SimulatedLAN.peer(1), delay: 5)
                ]
            }
        }
        lan.inject(.response([record]), from: peer)
        lan.run(for: 100)
        lan.with(beta) { $0.query(OperationID(1), name: name, type: .a, at: $1) }
        lan.run(for: 3000)
        return lan
    }

    /// Beta's queries for `gamma.local. A` in the `window` milliseconds from `start`.
    func queriesAbout(in lan: SimulatedLAN, from start: Instant, for window: Int) -> [(
        time: Instant, message: DNSMessage
    )] {
        lan.queries(from: beta).filter { $0.time >= start && $0.time < start + window }
            .filter { $0.message.questions.contains { $0.name == self.name && $0.type == .a } }
    }

    func removals(_ lan: SimulatedLAN) -> [Instant] {
        lan.events(of: beta, OperationID(1)).compactMap { entry in
            if case .recordRemoved = entry.event { return entry.time } else { return nil }
        }
    }

    @Test("asked twice without an answer, the record is flushed ten seconds later, long before its TTL ends")
    func unansweredRecordIsFlushed() throws {
        var lan = lan(answers: false)
        let start = lan.now
        lan.with(beta) { $0.reconfirm(Fixture.a(self.name, self.address), interfaceIndex: nil, at: $1) }
        lan.run(for: 15_000)
        #expect(removals(lan) == [start + MDNSConstants.failureObservationWindow])
        // Two bare queries, two seconds apart: no known answer, so the owner would answer with the record.
        let asked = queriesAbout(in: lan, from: start, for: 5000)
        #expect(asked.map { $0.time - start } == [0, MDNSConstants.reconfirmQueryGap])
        #expect(asked.allSatisfy { $0.message.answers.isEmpty })
    }

    @Test("an answer from its owner keeps the record")
    func answeredRecordStays() {
        var lan = lan(answers: true)
        let start = lan.now
        lan.with(beta) { $0.reconfirm(Fixture.a(self.name, self.address), interfaceIndex: nil, at: $1) }
        lan.run(for: 15_000)
        #expect(removals(lan).isEmpty)
        // It was asked about (the owner answered those queries), not merely left alone.
        let asked = queriesAbout(in: lan, from: start, for: 5000)
        #expect(asked.map { $0.time - start } == [0, MDNSConstants.reconfirmQueryGap])
    }

    @Test("asking again and again while a reconfirmation runs sends no more queries and does not put off the flush")
    func repeatedRequestsChangeNothing() {
        var lan = lan(answers: false)
        let start = lan.now
        for _ in 0..<8 {
            lan.with(beta) { $0.reconfirm(Fixture.a(self.name, self.address), interfaceIndex: nil, at: $1) }
            lan.run(for: 1000)
        }
        lan.run(for: 10_000)
        #expect(removals(lan) == [start + MDNSConstants.failureObservationWindow])
        let asked = queriesAbout(in: lan, from: start, for: 9000)
        #expect(asked.map { $0.time - start } == [0, MDNSConstants.reconfirmQueryGap])
    }

    @Test(
        "records that share a question: it goes out at most once a second, and each record is still asked about twice")
    func sharedQuestionIsRateLimited() {
        var lan = lan(answers: false)
        let second = IPv4Address(10, 0, 0, 52)
        // Added to the set without the cache-flush bit, so the first address stays.
        lan.inject(.response([ResourceRecord(name: name, ttl: 120, data: .a(second))]), from: peer)
        lan.run(for: 100)
        let start = lan.now
        lan.with(beta) { $0.reconfirm(Fixture.a(self.name, self.address), interfaceIndex: nil, at: $1) }
        lan.run(for: 100)
        lan.with(beta) { $0.reconfirm(Fixture.a(self.name, second), interfaceIndex: nil, at: $1) }
        lan.run(for: 15_000)
        let asked = queriesAbout(in: lan, from: start, for: 5000)
        // The second record's first query waits until a second after the first's; its second one is the first's.
        #expect(
            asked.map { $0.time - start } == [0, MDNSConstants.multicastRateLimit, MDNSConstants.reconfirmQueryGap])
        // Neither owner answered: both are flushed, each ten seconds after it was reconfirmed.
        #expect(
            removals(lan) == [
                start + MDNSConstants.failureObservationWindow, start + 100 + MDNSConstants.failureObservationWindow,
            ])
    }

    @Test("a record not cached, or on another interface, or this host's own, is left alone")
    func othersAreLeftAlone() {
        var lan = lan(answers: false)
        let start = lan.now
        lan.with(beta) { engine, now in
            engine.reconfirm(Fixture.a(self.name, IPv4Address(10, 0, 0, 51)), interfaceIndex: nil, at: now)
            engine.reconfirm(Fixture.a(self.name, self.address), interfaceIndex: 7, at: now)
            engine.reconfirm(
                ResourceRecord(name: engine.hostName, ttl: 120, data: .a(IPv4Address(10, 0, 0, 1)), cacheFlush: true),
                interfaceIndex: nil, at: now)
        }
        lan.run(for: 15_000)
        #expect(removals(lan).isEmpty)
        #expect(lan.hosts[beta].engine.hostLabel == "beta")
        #expect(
            lan.queries(from: beta).filter { $0.time >= start && $0.time < start + 3000 }
                .allSatisfy { !$0.message.questions.contains { $0.name == self.name || $0.name == "beta.local." } })
    }
}
