import HeraldEngine
import HeraldWire
import Testing

@Suite("Answering queries (RFC 6762 §5.4, §6)")
struct AnsweringTests {
    let printer = Fixture.instance("Printer")
    let peer = SimulatedLAN.peer(1)

    /// A LAN where host 0 ("alpha", 10.0.0.1) has announced `Printer._ipp._tcp.local.` and gone quiet.
    func established(ipv6: Bool = false, seed: UInt64 = 1) -> SimulatedLAN {
        var lan = SimulatedLAN(seed: seed)
        lan.useIPv6 = ipv6
        let alpha = lan.addHost("alpha", seed: seed &+ 100)
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Printer", txt: Fixture.txt(["q": nil])), at: $1)
        }
        lan.run(for: 10_000)
        return lan
    }

    /// Responses host 0 sent after `time`.
    func responses(_ lan: SimulatedLAN, after time: Instant) -> [(
        time: Instant, message: DNSMessage, destination: PacketDestination
    )] {
        lan.packets(from: 0).filter { $0.time > time && $0.message.isResponse }
    }

    @Test("a question for a unique record is answered at once, with the cache-flush bit")
    func uniqueAnswerAtOnce() throws {
        var lan = established()
        let askedAt = lan.now + lan.latency
        lan.inject(.query([Fixture.question(printer, .srv)]), from: peer)
        lan.run(for: 1000)
        let answers = responses(lan, after: askedAt - 1)
        try #require(answers.count == 1)
        #expect(answers[0].time == askedAt)
        #expect(answers[0].destination == .multicast)
        #expect(answers[0].message.answers.map(\.type) == [.srv])
        #expect(answers[0].message.answers.allSatisfy { $0.cacheFlush })
        #expect(answers[0].message.questions.isEmpty)
    }

    @Test("a question for a shared record is answered after a random 20–120 ms")
    func sharedAnswerDelay() throws {
        var lan = established()
        var delays: [Int] = []
        for _ in 0..<40 {
            let askedAt = lan.now + lan.latency
            lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer)
            lan.run(for: 1500)  // past the one-second multicast limit
            let answer = try #require(responses(lan, after: askedAt - 1).first)
            #expect(answer.message.answers.contains { $0.type == .ptr && $0.data == .ptr(printer) })
            delays.append(answer.time - askedAt)
        }
        #expect(delays.min()! >= 20)
        #expect(delays.max()! <= 120)
        #expect(Set(delays).count >= 10, "\(delays)")
    }

    @Test(
        "a query with several questions, all answered with unique records, is answered at once; one question this host cannot answer brings the 20–120 ms delay back"
    )
    func multiQuestionDelay() throws {
        var lan = established()
        var askedAt = lan.now + lan.latency
        lan.inject(
            .query([
                Fixture.question(printer, .srv), Fixture.question(printer, .txt), Fixture.question("alpha.local.", .a),
            ]),
            from: peer)
        lan.run(for: 1000)
        var answer = try #require(responses(lan, after: askedAt - 1).first)
        #expect(answer.time == askedAt)
        #expect(Set(answer.message.answers.map(\.type)) == [.srv, .txt, .a])
        // Someone else may own the other name: answers are spread as for shared records.
        lan.run(for: 2000)
        askedAt = lan.now + lan.latency
        lan.inject(.query([Fixture.question(printer, .srv), Fixture.question("elsewhere.local.", .a)]), from: peer)
        lan.run(for: 1000)
        answer = try #require(responses(lan, after: askedAt - 1).first)
        #expect((20...120).contains(answer.time - askedAt))
        #expect(answer.message.answers.map(\.type) == [.srv])
    }

    @Test("a query with the TC bit is answered after 400–500 ms")
    func truncatedQueryDelay() throws {
        var delays: [Int] = []
        for seed in UInt64(1)...8 {
            var lan = established(seed: seed)
            let askedAt = lan.now + lan.latency
            lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)], truncated: true), from: peer)
            lan.run(for: 1000)
            let answer = try #require(responses(lan, after: askedAt - 1).first)
            delays.append(answer.time - askedAt)
        }
        #expect(delays.allSatisfy { (400...500).contains($0) }, "\(delays)")
        #expect(Set(delays).count > 1)
    }

    @Test("a PTR answer brings the SRV, TXT and addresses along, and NSEC records for what the names lack")
    func additionalsForPTR() throws {
        var lan = established()
        let askedAt = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer)
        lan.run(for: 1000)
        let answer = try #require(responses(lan, after: askedAt).first).message
        #expect(answer.answers.map(\.type) == [.ptr])
        let additionals = answer.additionals
        #expect(additionals.contains { $0.type == .srv && $0.name == printer })
        #expect(additionals.contains { $0.type == .txt && $0.name == printer })
        #expect(
            additionals.contains {
                $0.type == .a && $0.name == "alpha.local." && $0.data == .a(IPv4Address(10, 0, 0, 1))
            })
        // The host has no IPv6 address: NSEC says alpha.local. has only an A record (and never the NSEC bit itself).
        let hostNSEC = try #require(additionals.first { $0.type == .nsec && $0.name == "alpha.local." })
        guard case .nsec(let next, let types) = hostNSEC.data else {
            Issue.record("not NSEC data")
            return
        }
        #expect(next == "alpha.local.")
        #expect(types.types == [.a])
        #expect(hostNSEC.cacheFlush)
        let instanceNSEC = try #require(additionals.first { $0.type == .nsec && $0.name == printer })
        if case .nsec(_, let types) = instanceNSEC.data { #expect(types.types == [.txt, .srv]) }
    }

    @Test(
        "an SRV answer brings the target's addresses; an A answer brings the AAAA records, or an NSEC when there are none"
    )
    func additionalsForSRVAndAddresses() throws {
        var lan = established()
        var askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .srv)]), from: peer)
        lan.run(for: 1500)
        let srvAnswer = try #require(responses(lan, after: askedAt).first).message
        #expect(srvAnswer.additionals.contains { $0.type == .a && $0.name == "alpha.local." })
        #expect(!srvAnswer.additionals.contains { $0.type == .txt })

        askedAt = lan.now
        lan.inject(.query([Fixture.question("alpha.local.", .a)]), from: peer)
        lan.run(for: 1500)
        let aAnswer = try #require(responses(lan, after: askedAt).first).message
        #expect(aAnswer.answers.map(\.type) == [.a])
        #expect(
            aAnswer.additionals.contains { record in
                if case .nsec(_, let types) = record.data {
                    return record.name == "alpha.local." && types.types == [.a]
                }
                return false
            })

        var dual = established(ipv6: true)
        askedAt = dual.now
        dual.inject(.query([Fixture.question("alpha.local.", .a)]), from: peer)
        dual.run(for: 1500)
        let dualAnswer = try #require(responses(dual, after: askedAt).first).message
        #expect(dualAnswer.answers.map(\.type) == [.a])
        #expect(dualAnswer.additionals.contains { $0.type == .aaaa && $0.name == "alpha.local." })
    }

    @Test(
        "a question for a type a name this host owns lacks is answered at once with NSEC; a shared name's is not answered"
    )
    func negativeAnswers() throws {
        var lan = established()
        let askedAt = lan.now + lan.latency
        lan.inject(.query([Fixture.question("alpha.local.", .aaaa)]), from: peer)
        lan.run(for: 1500)
        let answer = try #require(responses(lan, after: askedAt - 1).first)
        #expect(answer.time == askedAt)
        let nsec = try #require(answer.message.answers.first)
        #expect(answer.message.answers.count == 1)
        #expect(nsec.type == .nsec && nsec.name == "alpha.local." && nsec.ttl == 120)
        let before = lan.now
        lan.inject(.query([Fixture.question(Fixture.ippType, .srv)]), from: peer)
        lan.inject(.query([Fixture.question("nobody.local.", .a)]), from: peer)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).isEmpty)
    }

    @Test(
        "an NSEC the asker lists suppresses the negative answer only when it is the same record with at least half its TTL"
    )
    func negativeAnswerKnownAnswer() throws {
        var lan = established()
        // What this host would send: learn it first.
        var askedAt = lan.now
        lan.inject(.query([Fixture.question("alpha.local.", .aaaa)]), from: peer)
        lan.run(for: 1500)
        let nsec = try #require(responses(lan, after: askedAt).first?.message.answers.first)
        func asked(listing known: ResourceRecord) -> Bool {
            lan.run(for: 2000)
            askedAt = lan.now
            lan.inject(.query([Fixture.question("alpha.local.", .aaaa)], knownAnswers: [known]), from: peer)
            lan.run(for: 1500)
            return responses(lan, after: askedAt).contains { $0.message.answers.contains { $0.type == .nsec } }
        }
        var known = nsec
        known.cacheFlush = false
        #expect(!asked(listing: known), "the same NSEC with its full TTL")
        known.ttl = nsec.ttl / 2 - 1
        #expect(asked(listing: known), "less than half the TTL left")
        known = ResourceRecord(
            name: "alpha.local.", ttl: nsec.ttl,
            data: .nsec(next: "alpha.local.", types: TypeBitmap(types: [.a, .aaaa])))
        #expect(asked(listing: known), "an NSEC saying something else")
    }

    @Test("a question of another class than IN or ANY gets no answer, positive or negative")
    func otherClassesUnanswered() throws {
        var lan = established()
        let before = lan.now
        let chaos = RecordClass(3)
        lan.inject(.query([DNSQuestion(name: "alpha.local.", type: .a, recordClass: chaos)]), from: peer)
        lan.inject(.query([DNSQuestion(name: "alpha.local.", type: .aaaa, recordClass: chaos)]), from: peer)
        lan.inject(.query([DNSQuestion(name: printer, type: .srv, recordClass: chaos)]), from: peer)
        lan.run(for: 1500)
        #expect(responses(lan, after: before).isEmpty)
        // The same questions of class ANY are answered as IN ones are: the address, and NSEC for the missing AAAA.
        let askedAt = lan.now + lan.latency
        lan.inject(.query([DNSQuestion(name: "alpha.local.", type: .a, recordClass: .any)]), from: peer)
        lan.inject(.query([DNSQuestion(name: "alpha.local.", type: .aaaa, recordClass: .any)]), from: peer)
        lan.run(for: 1500)
        let answered = responses(lan, after: askedAt - 1).flatMap(\.message.answers).map(\.type)
        #expect(answered.contains(.a) && answered.contains(.nsec), "\(answered)")
    }

    @Test("no record appears twice in one packet, even when two services share their type's records")
    func noDuplicateRecords() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha")
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("One"), at: $1)
            $0.register(OperationID(2), Fixture.service("Two", port: 632), at: $1)
        }
        lan.run(for: 10_000)
        lan.inject(.query([Fixture.question(Fixture.serviceTypes, .ptr)]), from: peer)
        lan.run(for: 1500)
        lan.inject(
            .query([
                Fixture.question(Fixture.ippType, .ptr), Fixture.question(Fixture.instance("One"), .srv),
                Fixture.question(Fixture.instance("One"), .any), Fixture.question("alpha.local.", .any),
            ]), from: peer)
        lan.run(for: 1500)
        lan.inject(.query([Fixture.question(Fixture.instance("Two"), .srv, qu: true)]), from: peer)
        lan.run(for: 1500)
        let packets = lan.packets(from: alpha)
        #expect(packets.count > 6)
        for packet in packets {
            let records = packet.message.answers + packet.message.authorities + packet.message.additionals
            #expect(Set(records.map(RecordIdentityForTest.init)).count == records.count, "\(records)")
        }
        let enumeration = try #require(packets.last { $0.message.answers.contains { $0.name == Fixture.serviceTypes } })
        #expect(enumeration.message.answers.filter { $0.name == Fixture.serviceTypes }.count == 1)
    }

    @Test("a QU question is answered by unicast, unless the record has not been multicast for a quarter of its TTL")
    func unicastResponses() throws {
        var lan = established()
        // The SRV record (TTL 120 s) was last multicast in the announcements, a few seconds ago.
        var askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .srv, qu: true)]), from: peer)
        lan.run(for: 1000)
        var answer = try #require(responses(lan, after: askedAt).first)
        #expect(answer.destination == .unicast(peer))
        #expect(answer.message.answers.map(\.type) == [.srv])
        // Half a minute later (more than 120 s / 4 since the last multicast) the answer is multicast instead.
        lan.run(for: 31_000)
        askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .srv, qu: true)]), from: peer)
        lan.run(for: 1000)
        answer = try #require(responses(lan, after: askedAt).first)
        #expect(answer.destination == .multicast)
        // And now it was multicast recently, so a QU question gets unicast again.
        lan.run(for: 2000)
        askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .srv, qu: true)]), from: peer)
        lan.run(for: 1000)
        answer = try #require(responses(lan, after: askedAt).first)
        #expect(answer.destination == .unicast(peer))
        // The same from an address outside the link's subnets: a unicast reply would be dropped there, so multicast.
        lan.run(for: 2000)
        askedAt = lan.now
        lan.inject(
            .query([Fixture.question(printer, .srv, qu: true)]),
            from: SocketAddress(.v4(IPv4Address(192, 168, 7, 7)), port: 5353))
        lan.run(for: 1000)
        answer = try #require(responses(lan, after: askedAt).first)
        #expect(answer.destination == .multicast)
    }

    @Test(
        "a query sent to the host's own address is answered like a QU question, and ignored when it comes from off the link"
    )
    func directUnicastQuery() throws {
        var lan = established()
        var askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .srv)]), from: peer, to: 0, toUnicast: true)
        lan.run(for: 1000)
        let answer = try #require(responses(lan, after: askedAt).first)
        #expect(answer.destination == .unicast(peer))
        askedAt = lan.now
        let offLink = SocketAddress(.v4(IPv4Address(192, 168, 7, 7)), port: 5353)
        lan.inject(.query([Fixture.question(printer, .srv)]), from: offLink, to: 0, toUnicast: true)
        lan.run(for: 1000)
        #expect(responses(lan, after: askedAt).isEmpty)
    }

    @Test("a legacy query sent to the host's own address is answered from the link and ignored from off it")
    func directLegacyQuery() throws {
        var lan = established()
        var askedAt = lan.now
        lan.inject(
            .query([Fixture.question(printer, .srv)], id: 7), from: SimulatedLAN.peer(2, port: 40_000), to: 0,
            toUnicast: true)
        lan.run(for: 1000)
        #expect(responses(lan, after: askedAt).count == 1)
        askedAt = lan.now
        let offLink = SocketAddress(.v4(IPv4Address(192, 168, 7, 7)), port: 40_000)
        lan.inject(.query([Fixture.question(printer, .srv)], id: 8), from: offLink, to: 0, toUnicast: true)
        lan.run(for: 1000)
        #expect(responses(lan, after: askedAt).isEmpty)
    }

    @Test(
        "a legacy query from a port other than 5353 gets a unicast reply to that port with its ID and question, TTLs of at most 10 s and no cache-flush bits"
    )
    func legacyUnicast() throws {
        var lan = established()
        let legacy = SimulatedLAN.peer(2, port: 40_000)
        let askedAt = lan.now
        let question = Fixture.question(printer, .srv)
        lan.inject(.query([question], id: 0xBEEF), from: legacy)
        lan.run(for: 1000)
        let all = responses(lan, after: askedAt)
        try #require(all.count == 1)
        let reply = all[0]
        #expect(reply.destination == .unicast(legacy))
        #expect(reply.message.id == 0xBEEF)
        #expect(reply.message.questions == [question])
        #expect(reply.message.answers.map(\.type) == [.srv])
        let records = reply.message.answers + reply.message.additionals
        #expect(records.allSatisfy { $0.ttl <= 10 && !$0.cacheFlush })
        #expect(records.contains { $0.type == .a })
    }

    @Test("answers to queries that arrive close together are aggregated into one packet")
    func aggregation() throws {
        for seed in UInt64(1)...6 {
            var lan = established(seed: seed)
            let askedAt = lan.now
            lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer)
            lan.inject(.query([Fixture.question(Fixture.serviceTypes, .ptr)]), from: SimulatedLAN.peer(2), after: 1)
            lan.run(for: 1000)
            let all = responses(lan, after: askedAt)
            #expect(all.count == 1, "seed \(seed): \(all.map(\.time))")
            let names = Set(all.flatMap(\.message.answers).map(\.name))
            #expect(names == [Fixture.ippType, Fixture.serviceTypes])
            // Every answer still waited at least 20 ms after its own question.
            #expect(all.allSatisfy { $0.time - (askedAt + lan.latency + 1) >= 20 })
        }
    }

    @Test("a unique answer does not pull a pending shared answer out earlier than 20 ms")
    func sharedAnswerNotPulledEarly() throws {
        for seed in UInt64(1)...6 {
            var lan = established(seed: seed)
            let askedAt = lan.now + lan.latency
            lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer)
            lan.inject(.query([Fixture.question(printer, .srv)]), from: SimulatedLAN.peer(2), after: 2)
            lan.run(for: 1000)
            let ptr = try #require(
                responses(lan, after: askedAt - 1).first { $0.message.answers.contains { $0.type == .ptr } })
            #expect(ptr.time - askedAt >= 20, "seed \(seed)")
            let srv = try #require(
                responses(lan, after: askedAt - 1).first { $0.message.answers.contains { $0.type == .srv } })
            #expect(srv.time == askedAt + 2)
        }
    }

    @Test("a record is multicast at most once a second on a link, or every 250 ms when defending against a probe")
    func multicastRateLimit() throws {
        var lan = established()
        let start = lan.now
        let ask = DNSMessage.query([Fixture.question(printer, .srv)])
        lan.inject(ask, from: peer)
        lan.inject(ask, from: SimulatedLAN.peer(2), after: 300)
        lan.inject(ask, from: SimulatedLAN.peer(3), after: 600)
        lan.run(for: 3000)
        let times = lan.multicastResponses(from: 0, containing: printer, type: .srv).filter { $0.time > start }.map(
            \.time)
        #expect(times.first == start + lan.latency)
        #expect(times.gaps { Int($0.milliseconds) }.allSatisfy { $0 >= 1000 }, "\(times)")
        #expect(times.count == 2, "the later questions are answered once, a second after the first answer: \(times)")

        // Probes for the name, 100 ms apart, are each defended, but no faster than every 250 ms.
        lan.run(for: 5000)
        let probeStart = lan.now
        let probe = DNSMessage.probe([Fixture.srv(printer).with(cacheFlush: false)])
        lan.inject(probe, from: SimulatedLAN.peer(4))
        lan.inject(probe, from: SimulatedLAN.peer(4), after: 100)
        lan.run(for: 900)
        let defences = lan.multicastResponses(from: 0, containing: printer, type: .srv).filter { $0.time > probeStart }
            .map(\.time)
        #expect(defences == [probeStart + lan.latency, probeStart + lan.latency + 250])
    }
}
