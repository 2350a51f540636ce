import HeraldWire
import Testing

@testable import HeraldEngine

/// The querier driven directly: what goes out, and when, stays right whatever moves a question's time, among
/// thousands of quiet questions.
@Suite("The querier's schedule among thousands of questions")
struct QuerierScheduleTests {
    static let link = LinkID(interfaceIndex: 2, family: .ipv4)

    /// A querier, a link's cache and the engine's bookkeeping around them.
    struct Harness {
        var querier = Querier(firstQueryDelay: 20...120, sizeLimit: MessageSizeLimit(datagramSize: 9000))
        var caches: LinkTable<RecordCache> = [link: RecordCache(limit: 100_000)]
        var random = EngineRandom(seed: 11)
        /// Every question sent, with when.
        var sent: [(time: Instant, question: DNSQuestion)] = []
        /// The instants at which the querier's deadline woke the harness.
        var querierWakeUps: [Int64] = []
        var now = Instant.zero

        mutating func ask(_ key: RecordKey, by operation: UInt64) {
            querier.subscribe(
                OperationID(operation), to: key, on: link, at: now, random: &random, cache: caches[link])
        }

        /// Caches a record from a peer, telling the querier of its refresh as the engine does.
        mutating func receive(_ record: ResourceRecord) {
            let isAsked = querier.isAsked(RecordKey(record), on: link)
            var changes: [CacheChange] = []
            let cached = caches[link]!.insert(record, at: now, changes: &changes)
            querier.noteRefresh(at: cached?.nextRefresh, of: record, on: link, isAsked: isAsked)
        }

        /// A peer's multicast question (no known answers).
        mutating func observePeer(asking key: RecordKey) {
            let message = DNSMessage(questions: [DNSQuestion(name: key.name, type: key.type)])
            querier.observe(peerQuery: message, knownAnswers: KnownAnswers([]), on: link, at: now, cache: caches[link])
        }

        /// Moves to `time`: expiries (and the questions they restart), then the queries due.
        mutating func advance(to time: Instant) {
            now = time
            for change in caches[link]!.expire(at: now) {
                guard case .removed(let record) = change else { continue }
                querier.answerRemoved(RecordKey(record), on: link, cache: caches[link], at: now, random: &random)
            }
            var unicast: Set<LinkID> = []
            for packet in querier.sendDue(at: now, cache: &caches, mtus: [:], askedForUnicast: &unicast) {
                for question in try! DNSMessage(parsing: packet.bytes).questions { sent.append((now, question)) }
            }
        }

        /// Wakes at every deadline of the querier and the cache up to `end`.
        mutating func run(until end: Instant) {
            while true {
                let next = [querier.nextDeadline, caches[link]!.nextExpiry].compactMap { $0 }.min()
                guard let next, next <= end else { break }
                if next == querier.nextDeadline { querierWakeUps.append(next.milliseconds) }
                advance(to: max(now, next))
            }
            now = max(now, end)
        }

        func times(of key: RecordKey) -> [Int64] {
            sent.filter { $0.question.name == key.name && $0.question.type == key.type }.map(\.time.milliseconds)
        }
    }

    static func srvKey(_ n: Int) -> RecordKey {
        RecordKey(name: try! DNSName("Quiet \(n)._ipp._tcp.local."), type: .srv)
    }

    static func srv(_ n: Int, ttl: UInt32) -> ResourceRecord {
        ResourceRecord(
            name: srvKey(n).name, ttl: ttl, data: .srv(SRVData(port: 631, target: "quiet.local.")), cacheFlush: true)
    }

    /// A browse asked together with `count` quiet questions, run until every first query went out (by `end` ms):
    /// the browse's key and the instant of its first query, after which its next is due 1 s later.
    static func browseAmongQuiet(
        _ count: Int, firstQueriesBy end: Int64, in harness: inout Harness
    ) throws -> (RecordKey, Int64) {
        quietQuestions(count, in: &harness)
        let browse = RecordKey(name: "_ipp._tcp.local.", type: .ptr)
        harness.ask(browse, by: 1)
        harness.run(until: Instant(milliseconds: end))
        let first = try #require(harness.times(of: browse).first)
        #expect(harness.querier.nextDeadline == Instant(milliseconds: first + 1000))
        return (browse, first)
    }

    /// `count` SRV questions, each answered (TTL 4,500 s) before it is asked: after their first query they are quiet
    /// until their refreshes at 80 % of an hour and a quarter.
    static func quietQuestions(_ count: Int, in harness: inout Harness) {
        for n in 0..<count {
            harness.receive(srv(n, ttl: 4500))
            harness.ask(srvKey(n), by: UInt64(1000 + n))
        }
    }

    @Test("a question whose next query a lost answer moved earlier asks again 20–120 ms after the loss, then backs off")
    func answerRemovedMovesEarlier() throws {
        var harness = Harness()
        Self.quietQuestions(200, in: &harness)
        let key = Self.srvKey(-1)
        harness.receive(Self.srv(-1, ttl: 10))  // refreshes at 8, 8.5, 9, 9.5 s; gone at 10 s
        harness.ask(key, by: 1)
        harness.run(until: Instant(milliseconds: 20_000))
        let times = harness.times(of: key)
        try #require(times.count == 9, "\(times)")
        #expect((20...120).contains(times[0]))  // the first query, with the others
        #expect(Array(times[1...4]) == [8000, 8500, 9000, 9500])
        #expect((10_020...10_120).contains(times[5]), "asked again after the answer expired at 10 s: \(times)")
        #expect(Array(times[6...]) == [1000, 3000, 7000].map { times[5] + $0 })
        // None of the quiet questions was asked again.
        #expect(harness.sent.count(where: { $0.time.milliseconds > 200 && $0.question.name != key.name }) == 0)
    }

    @Test("a peer's duplicate question that pushes ours back leaves it due at the new time, not stuck")
    func peerQuestionPushesBack() throws {
        var harness = Harness()
        let (browse, first) = try Self.browseAmongQuiet(200, firstQueriesBy: 200, in: &harness)
        // 600 ms later, in the second half of the wait: the peer's question stands in for ours (RFC 6762 §7.3).
        harness.run(until: Instant(milliseconds: first + 600))
        harness.observePeer(asking: browse)
        // The querier may still wake at the old time (a question moved later leaves its bound early), but it sends
        // nothing then: the next query goes out 2 s after the peer's.
        #expect(harness.querier.nextDeadline! <= Instant(milliseconds: first + 2600))
        harness.querierWakeUps = []
        harness.run(until: Instant(milliseconds: first + 20_000))
        #expect(harness.times(of: browse) == [first, first + 2600, first + 6600, first + 14_600])
        #expect(harness.querierWakeUps.filter { $0 != first + 1000 } == [first + 2600, first + 6600, first + 14_600])
    }

    @Test(
        "a refresh due on one of thousands of answered questions goes out at its time; a refreshed record's old time costs a wake-up with nothing sent"
    )
    func refreshAmongThousands() throws {
        var harness = Harness()
        Self.quietQuestions(5000, in: &harness)
        let key = Self.srvKey(-1)
        harness.ask(key, by: 1)
        harness.receive(Self.srv(-1, ttl: 100))  // refreshes at 80, 85, 90, 95 s
        harness.run(until: Instant(milliseconds: 50_000))
        #expect(harness.querier.nextDeadline == Instant(milliseconds: 80_000))
        harness.querierWakeUps = []
        harness.run(until: Instant(milliseconds: 82_000))
        // Refreshed at 82 s: the refresh at 85 s goes stale; the next ones are at 162, 167, 172 and 177 s.
        harness.receive(Self.srv(-1, ttl: 100))
        harness.run(until: Instant(milliseconds: 180_000))
        #expect(harness.times(of: key).dropFirst() == [80_000, 162_000, 167_000, 172_000, 177_000])
        #expect(harness.sent.count(where: { $0.time.milliseconds > 1000 && $0.question.name != key.name }) == 0)
        #expect(harness.querierWakeUps == [80_000, 85_000, 162_000, 167_000, 172_000, 177_000])
    }

    @Test("ticks with nothing due look at no question; the next deadline is the next query, not a pass over 10,000")
    func idleTicksScanNothing() throws {
        var harness = Harness()
        let (browse, first) = try Self.browseAmongQuiet(10_000, firstQueriesBy: 1000, in: &harness)
        // A tick every millisecond (packets arriving) until the browse's second query: only that tick looks at the
        // questions.
        let scanned = harness.querier.questionsScanned
        for ms in stride(from: Int64(1001), through: first + 1000, by: 1) {
            harness.advance(to: Instant(milliseconds: ms))
        }
        #expect(harness.times(of: browse) == [first, first + 1000])
        #expect(harness.querier.questionsScanned - scanned == 10_001)
    }

    @Test("the first query of one question takes along the others not yet asked whose shortest delay has passed")
    func firstQueriesTogether() throws {
        var harness = Harness()
        Self.quietQuestions(100, in: &harness)
        harness.run(until: Instant(milliseconds: 1000))
        let keys = (0..<5).map { RecordKey(name: try! DNSName("Host \($0).local."), type: .a) }
        for (n, key) in keys.enumerated() { harness.ask(key, by: UInt64(n + 1)) }
        harness.run(until: Instant(milliseconds: 1200))
        let firsts = keys.map { harness.times(of: $0).first }
        #expect(Set(firsts).count == 1 && firsts[0] != nil, "\(firsts)")
        // In query order, in one packet: wire order of names.
        let asked = harness.sent.filter { $0.time.milliseconds > 1000 }.map(\.question.name)
        #expect(asked == keys.map(\.name))
    }
}
