import HeraldEngine
import HeraldWire
import Testing

@Suite("Continuous querying (RFC 6762 §5.2, §7.1, §7.3) and client operations")
struct QuerierTests {
    let printer = Fixture.instance("Printer")
    let peer = SimulatedLAN.peer(1)

    /// Queries host `host` sent that ask `name`/`type`.
    func queries(_ lan: SimulatedLAN, from host: Int, asking name: DNSName, _ type: RecordType)
        -> [(time: Instant, message: DNSMessage)]
    {
        lan.queries(from: host).filter { $0.message.questions.contains { $0.name == name && $0.type == type } }
    }

    @Test(
        "a browse asks first after 20–120 ms, then at intervals of at least one second that at least double, up to one hour"
    )
    func backOff() throws {
        var firstDelays: [Int] = []
        for seed in UInt64(1)...12 {
            var lan = SimulatedLAN(seed: seed)
            let beta = lan.addHost("beta", seed: seed &* 13)
            lan.run(for: 3000)
            let start = lan.now
            lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
            lan.run(for: seed == 1 ? 4 * 3_600_000 : 2000)
            let asked = queries(lan, from: beta, asking: Fixture.ippType, .ptr)
            let first = try #require(asked.first)
            firstDelays.append(first.time - start)
            // Nothing is cached: the first query asks for unicast replies, the retransmissions do not.
            #expect(first.message.questions[0].unicastResponse)
            #expect(asked.dropFirst().allSatisfy { !$0.message.questions[0].unicastResponse })
            guard seed == 1 else { continue }
            let gaps = asked.gaps { Int($0.time.milliseconds) }
            try #require(gaps.count > 12)
            #expect(gaps[0] >= 1000)
            for (previous, next) in zip(gaps, gaps.dropFirst()) { #expect(next >= min(2 * previous, 3_600_000)) }
            #expect(gaps.allSatisfy { $0 <= 3_600_000 })
            #expect(gaps.suffix(2) == [3_600_000, 3_600_000])
        }
        #expect(firstDelays.allSatisfy { (20...120).contains($0) }, "\(firstDelays)")
        #expect(Set(firstDelays).count >= 5)
    }

    @Test(
        "QU first queries (RFC 6762 §5.4): a unicast reply from the link is taken while the question is fresh; a question with cached answers asks for multicast"
    )
    func unicastFirstQuery() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        lan.run(for: 200)
        let first = try #require(queries(lan, from: beta, asking: Fixture.ippType, .ptr).first)
        #expect(first.message.questions[0].unicastResponse)

        // A peer answers by unicast: cached and reported, and counted.
        lan.inject(.response([Fixture.ptr(Fixture.ippType, printer)]), from: peer, toUnicast: true)
        lan.run(for: 100)
        #expect(
            lan.events(of: beta, OperationID(1)).contains { $0.event == .instanceAdded(printer, SimulatedLAN.ipv4Link) }
        )
        #expect(lan.hosts[beta].engine.statistics.unicastResponsesReceived == 1)

        // Asked again with the answer cached: an ordinary question listing it as a known answer.
        lan.with(beta) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 100)
        let restart = lan.now
        lan.with(beta) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.run(for: 200)
        let again = try #require(queries(lan, from: beta, asking: Fixture.ippType, .ptr).first { $0.time > restart })
        #expect(!again.message.questions[0].unicastResponse)
        #expect(again.message.answers.contains { $0.data == .ptr(printer) })

        // Long after the last QU question, a unicast "reply" is not taken.
        lan.run(for: 5000)
        let other = Fixture.instance("Stranger")
        lan.inject(.response([Fixture.ptr(Fixture.ippType, other)]), from: peer, toUnicast: true)
        lan.run(for: 100)
        #expect(
            !lan.events(of: beta, OperationID(2)).contains { $0.event == .instanceAdded(other, SimulatedLAN.ipv4Link) })
        #expect(lan.hosts[beta].engine.statistics.unicastResponsesReceived == 1)

        // Configured off (a firewall that passes only multicast): the first query is an ordinary one.
        var quiet = SimulatedLAN()
        let gamma = quiet.addHost("gamma") { $0.unicastFirstQueries = false }
        quiet.run(for: 3000)
        quiet.with(gamma) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        quiet.run(for: 200)
        let plain = try #require(queries(quiet, from: gamma, asking: Fixture.ippType, .ptr).first)
        #expect(!plain.message.questions[0].unicastResponse)
    }

    @Test(
        "questions asked together share one first query, and no question's first query leaves sooner than 20 ms or later than 120 ms after it was asked"
    )
    func firstQueriesShared() throws {
        // Twenty browses started at once: one packet with all twenty questions.
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let start = lan.now
        let types = (0..<20).map { DNSName(stringLiteral: "_t\($0)._tcp.local.") }
        for (index, type) in types.enumerated() {
            lan.with(beta) { $0.browse(OperationID(UInt64(index + 1)), type: type, at: $1) }
        }
        lan.run(for: 500)
        let first = lan.queries(from: beta).filter { $0.time > start && $0.time - start <= 500 }
        try #require(first.count == 1, "\(first.map { $0.message.questions.count })")
        #expect(Set(first[0].message.questions.map(\.name)) == Set(types))
        #expect((20...120).contains(first[0].time - start))

        // Questions asked a little apart: each first query within its own 20–120 ms window, shared when they fit.
        for seed in UInt64(1)...20 {
            var lan = SimulatedLAN(seed: seed)
            let beta = lan.addHost("beta", seed: seed &* 7)
            lan.run(for: 3000)
            let askedA = lan.now
            lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
            lan.run(for: Int(seed * 7 % 100))
            let askedB = lan.now
            lan.with(beta) { $0.browse(OperationID(2), type: types[0], at: $1) }
            lan.run(for: 500)
            let a = try #require(queries(lan, from: beta, asking: Fixture.ippType, .ptr).first)
            let b = try #require(queries(lan, from: beta, asking: types[0], .ptr).first)
            #expect((20...120).contains(a.time - askedA), "seed \(seed): \(a.time - askedA)")
            #expect((20...120).contains(b.time - askedB), "seed \(seed): \(b.time - askedB)")
        }
    }

    @Test("queries list cached answers with at least half their TTL left, with the TTL left and no cache-flush bit")
    func knownAnswersInQueries() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        lan.run(for: 500)
        let receivedAt = lan.now + lan.latency
        lan.inject(.response([Fixture.ptr(Fixture.ippType, printer, ttl: 100)]), from: peer)
        lan.run(for: 120_000)
        let asked = queries(lan, from: beta, asking: Fixture.ippType, .ptr).filter { $0.time > receivedAt }
        try #require(asked.count >= 6)
        var withKnownAnswer = 0
        for query in asked {
            let age = query.time - receivedAt
            let known = query.message.answers.filter { $0.data == .ptr(printer) }
            if age <= 50_000 {
                #expect(known.count == 1, "at \(age) ms")
                #expect(known.allSatisfy { !$0.cacheFlush && $0.ttl <= 100 - UInt32(age / 1000) && $0.ttl >= 50 })
                withKnownAnswer += 1
            } else {
                #expect(known.isEmpty, "at \(age) ms the record has less than half its TTL left")
            }
        }
        #expect(withKnownAnswer >= 4)
        #expect(asked.contains { $0.time - receivedAt > 50_000 })
    }

    @Test("duplicate question suppression: a peer asking the same question first counts as our own query")
    func duplicateQuestionSuppression() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.firstQueryDelay = 50...120 }
        lan.run(for: 3000)
        var start = lan.now
        lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer, after: 10)
        lan.run(for: 3000)
        var asked = queries(lan, from: beta, asking: Fixture.ippType, .ptr).filter { $0.time > start }
        let first = try #require(asked.first)
        #expect(first.time - (start + 10 + lan.latency) >= 1000, "our first query was replaced by the peer's")

        // The peer's query lists a known answer we do not have: ours still goes out as planned.
        lan.with(beta) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 1000)
        start = lan.now
        lan.with(beta) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.inject(
            .query([Fixture.question(Fixture.ippType, .ptr)], knownAnswers: [Fixture.ptr(Fixture.ippType, printer)]),
            from: peer, after: 10)
        lan.run(for: 500)
        asked = queries(lan, from: beta, asking: Fixture.ippType, .ptr).filter { $0.time > start }
        #expect(asked.first.map { (50...120).contains($0.time - start) } == true)
    }

    @Test(
        "duplicate question suppression: a truncated query, whose known answers go on in later packets, does not count")
    func truncatedQueryNotDuplicate() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.firstQueryDelay = 50...120 }
        lan.run(for: 3000)
        let start = lan.now
        lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)], truncated: true), from: peer, after: 10)
        lan.run(for: 500)
        let asked = queries(lan, from: beta, asking: Fixture.ippType, .ptr).filter { $0.time > start }
        #expect(asked.first.map { (50...120).contains($0.time - start) } == true, "\(asked.map(\.time))")
    }

    @Test(
        "a peer's same question counts for our next query only close to it: three one-shot queries cost one doubling, not three"
    )
    func duplicateQuestionsDoubleOncePerQuery() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta") { $0.firstQueryDelay = 100...100 }
        lan.run(for: 3000)
        let start = lan.now
        lan.with(beta) { $0.browse(OperationID(1), type: Fixture.ippType, at: $1) }
        lan.run(for: 8000)
        // Ours at +0.1, 1.1, 3.1 and 7.1 s; the next is due at 15.1 s.
        let ours = queries(lan, from: beta, asking: Fixture.ippType, .ptr).filter { $0.time > start }.map {
            $0.time - start
        }
        #expect(ours == [100, 1100, 3100, 7100])
        // A one-shot resolver asks the same at 9.6 s (too early to stand for ours), 13.0 s (close to it: counts as
        // ours, so the next is due 16 s later) and 16.4 s (early again).
        for at in [9600, 13_000, 16_400] {
            lan.inject(.query([Fixture.question(Fixture.ippType, .ptr)]), from: peer, after: start + at - lan.now)
        }
        lan.run(for: 40_000)
        let later = queries(lan, from: beta, asking: Fixture.ippType, .ptr).filter { $0.time > start + 8000 }
            .map { $0.time - start }
        #expect(later.first == 13_000 + lan.latency + 16_000, "\(later)")
    }

    @Test(
        "a cached answer is refreshed at 80, 85, 90 and 95 % of its TTL (plus up to 2 %) while someone wants it, then expires"
    )
    func refreshQueries() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let name: DNSName = "gamma.local."
        lan.with(beta) { $0.query(OperationID(1), name: name, type: .a, at: $1) }
        lan.run(for: 500)
        let receivedAt = lan.now + lan.latency
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 3), ttl: 100)]), from: peer)
        lan.run(for: 99_000)
        let refreshes = queries(lan, from: beta, asking: name, .a).filter { $0.time - receivedAt > 10_000 }.map {
            $0.time - receivedAt
        }
        try #require(refreshes.count == 4, "\(refreshes)")
        for (refresh, percent) in zip(refreshes, [80, 85, 90, 95]) {
            #expect((percent * 1000...(percent + 2) * 1000).contains(refresh), "\(refresh) ms for \(percent) %")
        }
        lan.run(for: 2000)
        let removed = lan.events(of: beta, OperationID(1)).filter {
            if case .recordRemoved = $0.event { return true } else { return false }
        }
        #expect(removed.map { $0.time - receivedAt } == [100_000])
    }

    @Test("an answered refresh keeps the record: an A record followed for ten minutes never goes away")
    func refreshAnswered() {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { $0.query(OperationID(1), name: "alpha.local.", type: .a, at: $1) }
        lan.run(for: 600_000)
        let events = lan.events(of: beta, OperationID(1)).map(\.event)
        #expect(events == [.recordAdded(Fixture.a("alpha.local.", IPv4Address(10, 0, 0, 1)), SimulatedLAN.ipv4Link)])
        // Refreshes went out roughly every 96–98 s, and alpha answered each.
        let refreshes = queries(lan, from: beta, asking: "alpha.local.", .a).filter {
            $0.time > Instant(milliseconds: 10_000)
        }
        #expect((5...7).contains(refreshes.count), "\(refreshes.map(\.time))")
        _ = alpha
    }

    @Test("no refresh queries for records nobody is interested in")
    func noRefreshWithoutInterest() {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let name: DNSName = "gamma.local."
        // Learnt passively, with nobody asking.
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 3), ttl: 100)]), from: peer)
        lan.run(for: 200_000)
        #expect(lan.queries(from: beta).isEmpty)
        // Asked for, then given up on before the refresh points.
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 3), ttl: 100)]), from: peer)
        lan.run(for: 10)
        lan.with(beta) { $0.query(OperationID(1), name: name, type: .a, at: $1) }
        lan.run(for: 5000)
        lan.with(beta) { $0.cancel(OperationID(1), at: $1) }
        let cancelledAt = lan.now
        lan.run(for: 200_000)
        #expect(lan.queries(from: beta).filter { $0.time > cancelledAt }.isEmpty)
    }

    @Test("once an answer expires the question is asked again")
    func askAgainAfterExpiry() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let name: DNSName = "gamma.local."
        lan.with(beta) { $0.query(OperationID(1), name: name, type: .a, at: $1) }
        lan.run(for: 500)
        let receivedAt = lan.now + lan.latency
        lan.inject(.response([Fixture.a(name, IPv4Address(10, 0, 0, 3), ttl: 20)]), from: peer)
        lan.run(for: 30_000)
        let after = queries(lan, from: beta, asking: name, .a).filter { $0.time - receivedAt > 20_000 }
        let next = try #require(after.first)
        #expect(next.time - receivedAt <= 20_000 + 120)
    }

    @Test(
        "an owner's NSEC saying a type does not exist holds that question back until the NSEC runs out (RFC 6762 §6.1)")
    func negativeAnswerHoldsQuestion() throws {
        var lan = SimulatedLAN()
        // IPv4 only: its announcements and answers carry an NSEC (TTL 120 s) without AAAA.
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 5000)
        let start = lan.now
        lan.with(beta) { $0.query(OperationID(1), name: "alpha.local.", type: .aaaa, at: $1) }
        lan.run(for: 300_000)
        let asked = queries(lan, from: beta, asking: "alpha.local.", .aaaa).map { $0.time - start }
        let negativeAnswers = lan.packets(from: alpha).filter { packet in
            packet.message.isResponse && packet.message.answers.contains { $0.type == .nsec }
        }.map { $0.time - start }
        // The NSEC of alpha's announcement, cached before the question, answers it until it runs out (about 119 s
        // from now); then each question draws a new one: not 1, 3, 7, 15, 31 … s apart.
        #expect(asked.count == 2, "\(asked)")
        #expect(asked.first.map { (110_000...120_000).contains($0) } == true, "\(asked)")
        #expect(zip(asked, asked.dropFirst()).allSatisfy { (119_000...121_000).contains($1 - $0) }, "\(asked)")
        #expect(negativeAnswers.count == asked.count, "\(negativeAnswers)")
    }

    @Test("an NSEC claiming more than an hour holds no question: the question keeps its usual schedule")
    func longNegativeAnswerIgnored() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let name: DNSName = "gamma.local."
        let start = lan.now
        lan.with(beta) { $0.query(OperationID(1), name: name, type: .aaaa, at: $1) }
        lan.inject(
            .response([
                ResourceRecord(
                    name: name, ttl: 0x7FFF_FFFF, data: .nsec(next: name, types: TypeBitmap(types: [.a])),
                    cacheFlush: true)
            ]), from: peer)
        lan.run(for: 300_000)
        #expect(lan.hosts[beta].engine.cachedRecords(on: SimulatedLAN.ipv4Link).contains { $0.record.type == .nsec })
        let asked = queries(lan, from: beta, asking: name, .aaaa).map { $0.time - start }
        #expect(asked.count >= 8, "\(asked)")
    }

    @Test("a resolve reports SRV, TXT and addresses, and follows the SRV record to a new target host")
    func resolveFollowsTarget() throws {
        var lan = SimulatedLAN()
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let one: DNSName = "one.local."
        let two: DNSName = "two.local."
        let txt = Fixture.txt(["path": Array("/x".utf8)])
        lan.inject(
            .response(
                [
                    Fixture.srv(printer, port: 631, target: one),
                    ResourceRecord(name: printer, ttl: 4500, data: .txt(txt), cacheFlush: true),
                ],
                additionals: [Fixture.a(one, IPv4Address(10, 0, 0, 31))]), from: peer)
        lan.run(for: 100)
        lan.with(beta) { $0.resolve(OperationID(1), instance: printer, at: $1) }
        lan.run(for: 1000)
        var resolved = lan.events(of: beta, OperationID(1)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        var service = try #require(resolved.last)
        #expect(service.target == one && service.port == 631 && service.txt == txt)
        #expect(service.addresses == [.v4(IPv4Address(10, 0, 0, 31))])

        // The service moves to another host; its address is only known by asking, and a scripted host answers.
        let peer2 = SimulatedLAN.peer(2)
        lan.reactors.append { packet in
            guard let message = packet.message, !message.isResponse,
                message.questions.contains(where: { $0.name == two && $0.type == .a })
            else { return [] }
            return [
                SimulatedLAN.Injection(
                    bytes: DNSMessage.response([Fixture.a(two, IPv4Address(10, 0, 0, 32))]).wire, source: peer2)
            ]
        }
        lan.run(for: 3000)
        lan.inject(.response([Fixture.srv(printer, port: 632, target: two)]), from: peer)
        lan.run(for: 3000)
        resolved = lan.events(of: beta, OperationID(1)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        service = try #require(resolved.last)
        #expect(service.target == two && service.port == 632)
        #expect(service.addresses == [.v4(IPv4Address(10, 0, 0, 32))])
        #expect(!queries(lan, from: beta, asking: two, .a).isEmpty)
    }

    @Test(
        "a browse reports instances with their link, removes them when the link goes away and finds them again when it returns"
    )
    func eventsFollowLinks() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.with(beta) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.run(for: 5000)
        lan.removeLink(of: beta, SimulatedLAN.ipv4Link)
        lan.run(for: 1000)
        lan.addInterface(to: beta, interfaceIndex: 1, address: .v4(IPv4Address(10, 0, 0, 2)))
        lan.run(for: 5000)
        let link = SimulatedLAN.ipv4Link
        #expect(
            lan.events(of: beta, OperationID(2)).map(\.event)
                == [.instanceAdded(printer, link), .instanceRemoved(printer, link), .instanceAdded(printer, link)])
    }

    @Test(
        "operations sharing a question: each hears its answers, the question is asked while any of them is left, and not after the last is cancelled"
    )
    func sharedQuestion() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        for id in UInt64(2)...4 { lan.with(beta) { $0.browse(OperationID(id), type: Fixture.ippType, at: $1) } }
        lan.run(for: 5000)
        let link = SimulatedLAN.ipv4Link
        for id in UInt64(2)...4 {
            #expect(lan.events(of: beta, OperationID(id)).map(\.event) == [.instanceAdded(printer, link)])
        }
        // Two of three cancelled, in an order other than they came: the last one still asks and still hears.
        lan.with(beta) { $0.cancel(OperationID(3), at: $1) }
        lan.with(beta) { $0.cancel(OperationID(2), at: $1) }
        let asked = queries(lan, from: beta, asking: Fixture.ippType, .ptr).count
        lan.run(for: 20_000)
        #expect(queries(lan, from: beta, asking: Fixture.ippType, .ptr).count > asked)
        lan.with(alpha) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 3000)
        #expect(
            lan.events(of: beta, OperationID(4)).map(\.event)
                == [.instanceAdded(printer, link), .instanceRemoved(printer, link)])
        #expect(lan.events(of: beta, OperationID(2)).map(\.event) == [.instanceAdded(printer, link)])
        // The last one gone, nobody asks any more.
        lan.with(beta) { $0.cancel(OperationID(4), at: $1) }
        let finally = queries(lan, from: beta, asking: Fixture.ippType, .ptr).count
        lan.run(for: 3_600_000)
        #expect(queries(lan, from: beta, asking: Fixture.ippType, .ptr).count == finally)
    }
}
