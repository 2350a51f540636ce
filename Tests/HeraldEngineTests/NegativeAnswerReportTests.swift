import HeraldEngine
import HeraldWire
import Testing

@Suite("Negative answers reported to queries that ask for them (RFC 6762 §6.1, ReturnIntermediates)")
struct NegativeAnswerReportTests {
    let peer = SimulatedLAN.peer(1)
    let gamma: DNSName = "gamma.local."
    var key: RecordKey { RecordKey(name: gamma, type: .aaaa) }

    func nsec(ttl: UInt32 = 120, types: [RecordType] = [.a]) -> ResourceRecord {
        ResourceRecord(
            name: gamma, ttl: ttl, data: .nsec(next: gamma, types: TypeBitmap(types: types)), cacheFlush: true)
    }

    /// What operation `id` heard, in order, in a short form: "+no AAAA (120 s)", "-no AAAA", "+AAAA", "-AAAA".
    func story(_ lan: SimulatedLAN, _ host: Int, _ id: OperationID) -> [String] {
        lan.events(of: host, id).compactMap { entry -> String? in
            switch entry.event {
            case .negativeAnswerAdded(let key, _, let ttl): return "+no \(key.type) (\(ttl) s)"
            case .negativeAnswerRemoved(let key, _): return "-no \(key.type)"
            case .recordAdded(let record, _): return "+\(record.type)"
            case .recordRemoved(let record, _): return "-\(record.type)"
            default: return nil
            }
        }
    }

    @Test(
        "a peer's NSEC without the type is reported with its TTL; a record of the type ends it first; its goodbye and the NSEC's end are reported; a query not asking hears none of it"
    )
    func reportedAndEnded() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { engine, now in
            engine.query(OperationID(1), name: gamma, type: .aaaa, reportingNegativeAnswers: true, at: now)
            engine.query(OperationID(2), name: gamma, type: .aaaa, at: now)
        }
        lan.run(for: 500)
        lan.inject(.response([Fixture.a(gamma, IPv4Address(10, 0, 0, 7)), nsec()]), from: peer)
        lan.run(for: 500)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)"])

        // The owner gains an IPv6 address: the negative answer ends before the record is reported.
        let aaaa = ResourceRecord(name: gamma, ttl: 120, data: .aaaa(IPv6Address("fe80::7")!), cacheFlush: true)
        lan.inject(.response([aaaa]), from: peer)
        lan.run(for: 500)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA", "+AAAA"])

        // It loses it again (a goodbye, dropped after a second) while the NSEC still stands: negative once more,
        // with what is left of the NSEC's TTL.
        lan.inject(.response([aaaa.with(ttl: 0)]), from: peer)
        lan.run(for: 2000)
        let afterGoodbye = story(lan, beta, OperationID(1))
        #expect(afterGoodbye.count == 5 && afterGoodbye[3] == "-AAAA", "\(afterGoodbye)")
        #expect(afterGoodbye.last.map { $0.hasPrefix("+no AAAA (11") } == true, "\(afterGoodbye)")

        // The NSEC runs out and nobody renews it: the negative answer ends.
        lan.run(for: 120_000)
        #expect(story(lan, beta, OperationID(1)).last == "-no AAAA", "\(story(lan, beta, OperationID(1)))")

        // The query that did not ask heard the records only.
        #expect(story(lan, beta, OperationID(2)) == ["+AAAA", "-AAAA"])
    }

    @Test(
        "a query started while a negative answer is cached hears it at once; an NSEC listing the type, or of more than an hour, is no negative answer; a cancelled query hears nothing more"
    )
    func cachedListedAndCancelled() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.inject(.response([nsec()]), from: peer)
        lan.run(for: 100)
        lan.with(beta) { engine, now in
            engine.query(OperationID(1), name: gamma, type: .aaaa, reportingNegativeAnswers: true, at: now)
            engine.query(OperationID(2), name: gamma, type: .a, reportingNegativeAnswers: true, at: now)
            engine.query(OperationID(3), name: gamma, type: .any, reportingNegativeAnswers: true, at: now)
        }
        lan.run(for: 10)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)"])
        #expect(story(lan, beta, OperationID(2)).isEmpty, "the NSEC says A exists")
        #expect(
            story(lan, beta, OperationID(3)) == ["+NSEC"], "ANY gets the NSEC as a record, never as a negative answer")

        // The owner's new NSEC lists AAAA (it replaces the old one): no longer a negative answer.
        lan.inject(.response([nsec(types: [.a, .aaaa])]), from: peer)
        lan.run(for: 1500)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA"])

        // An NSEC claiming more than an hour is not taken as a negative answer.
        lan.inject(.response([nsec(ttl: 7200)]), from: peer)
        lan.run(for: 1500)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA"])

        // The same NSEC again with a TTL of two minutes: the refresh makes it a negative answer again.
        lan.inject(.response([nsec(ttl: 120)]), from: peer)
        lan.run(for: 100)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA", "+no AAAA (120 s)"])
        // And with two hours: no longer.
        lan.inject(.response([nsec(ttl: 7200)]), from: peer)
        lan.run(for: 100)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA", "+no AAAA (120 s)", "-no AAAA"])

        // A cancelled query hears nothing more (the NSEC comes back to two minutes, which the query would hear).
        lan.with(beta) { engine, now in engine.cancel(OperationID(1), at: now) }
        lan.inject(.response([nsec(ttl: 120)]), from: peer)
        lan.run(for: 1500)
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA", "+no AAAA (120 s)", "-no AAAA"])
        lan.with(beta) { engine, now in
            engine.query(OperationID(4), name: gamma, type: .aaaa, reportingNegativeAnswers: true, at: now)
        }
        #expect(
            story(lan, beta, OperationID(4)) == ["+no AAAA (119 s)"],
            "the NSEC stands: a new query hears it, with what is left of its TTL")
    }

    @Test("a full cache keeps the NSEC behind a reported negative answer: junk is evicted instead")
    func nsecNotEvicted() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.cacheLimitPerLink = 64 }
        lan.run(for: 3000)
        lan.with(beta) { engine, now in
            engine.query(OperationID(1), name: gamma, type: .aaaa, reportingNegativeAnswers: true, at: now)
        }
        lan.inject(.response([nsec()]), from: peer)
        lan.run(for: 100)
        for n in 0..<100 {
            lan.inject(
                .response([
                    Fixture.a(DNSName(stringLiteral: "junk\(n).local."), IPv4Address(10, 9, 0, UInt8(n)), ttl: 4500)
                ]),
                from: peer)
        }
        lan.run(for: 100)
        #expect(lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link).contains { $0.record.type == .nsec })
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)"])
    }

    @Test("records leaving in one batch are reported gone before a negative answer that their leaving begins")
    func batchOrder() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { engine, now in
            engine.query(OperationID(1), name: gamma, type: .a, reportingNegativeAnswers: true, at: now)
        }
        lan.inject(.response([Fixture.a(gamma, IPv4Address(10, 0, 0, 7)), nsec(types: [.a])]), from: peer)
        lan.run(for: 2000)
        // The owner loses its IPv4 address: a goodbye for the A record and a new NSEC without A. The A record (after
        // its second of grace) and the old NSEC (flushed after its second) leave together.
        lan.inject(.response([nsec(types: [.aaaa]), Fixture.a(gamma, IPv4Address(10, 0, 0, 7), ttl: 0)]), from: peer)
        lan.run(for: 3000)
        #expect(
            story(lan, beta, OperationID(1)) == ["+A", "-A", "+no A (119 s)"], "\(story(lan, beta, OperationID(1)))")
    }

    @Test("a link that goes away ends its negative answers")
    func linkRemoved() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { engine, now in
            engine.query(OperationID(1), name: gamma, type: .aaaa, reportingNegativeAnswers: true, at: now)
        }
        lan.inject(.response([nsec()]), from: peer)
        lan.run(for: 500)
        lan.with(beta) { engine, now in engine.removeLink(SimulatedLAN.ipv4Link, at: now) }
        #expect(story(lan, beta, OperationID(1)) == ["+no AAAA (120 s)", "-no AAAA"])
    }
}
