import HeraldWire
import Testing

/// Golden tests over the captured corpora (`Fixtures/*.corpus`, described in corpus/STATS.md): every message
/// parses, and parse → serialize → parse is lossless, case-exact, stable and never larger than the input.
@Suite("Corpus golden tests")
struct CorpusGoldenTests {
    enum Fixture: String, CaseIterable, CustomTestStringConvertible {
        case realistic, large
        var messages: [[UInt8]] {
            get throws {
                switch self {
                case .realistic: return try Corpus.realistic.get()
                case .large: return try Corpus.large.get()
                }
            }
        }
        var testDescription: String { "\(rawValue).corpus" }
    }

    /// Parses every message of a corpus, failing the test (with the index and error) at the first one that does not.
    private func parseAll(_ fixture: Fixture) throws -> [DNSMessage] {
        try fixture.messages.enumerated().map { index, bytes in
            do {
                return try DNSMessage(parsing: bytes)
            } catch {
                Issue.record("message \(index) of \(fixture.rawValue) does not parse: \(error)")
                throw error
            }
        }
    }

    @Test("The corpus reader splits length-prefixed messages and refuses a length that overruns the file")
    func corpusReaderFormat() throws {
        #expect(try CorpusReader.messages(in: []) == [])
        #expect(try CorpusReader.messages(in: [0, 2, 0xAA, 0xBB, 0, 0, 0, 1, 0xCC]) == [[0xAA, 0xBB], [], [0xCC]])
        #expect(throws: CorpusReader.FormatError.self) { try CorpusReader.messages(in: [0, 3, 0xAA, 0xBB]) }
        #expect(throws: CorpusReader.FormatError.self) { try CorpusReader.messages(in: [0, 1, 0xAA, 0]) }
        do {
            _ = try CorpusReader.messages(in: [0, 1, 0xAA, 0, 9, 1])
            Issue.record("a truncated corpus was accepted")
        } catch {
            #expect(error.offset == 3)
        }
    }

    @Test("Every message of the corpus parses", arguments: Fixture.allCases)
    func everyMessageParses(fixture: Fixture) throws {
        let messages = try fixture.messages
        var failures: [String] = []
        for (index, bytes) in messages.enumerated() {
            do {
                _ = try DNSMessage(parsing: bytes)
            } catch {
                failures.append("message \(index): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) messages fail to parse, first: \(failures.prefix(5))")
        #expect(messages.count == (fixture == .realistic ? 3004 : 240))
    }

    @Test(
        "Parse → serialize → parse gives the same message, names byte for byte, stable bytes, never larger",
        arguments: Fixture.allCases)
    func roundTripIsLosslessCaseExactStableAndCompact(fixture: Fixture) throws {
        let inputs = try fixture.messages
        var failures: [String] = []
        var inputBytes = 0
        var outputBytes = 0
        for (index, input) in inputs.enumerated() {
            let parsed = try DNSMessage(parsing: input)
            let serialized = try parsed.serialized()
            let reparsed = try DNSMessage(parsing: serialized)
            inputBytes += input.count
            outputBytes += serialized.count

            if reparsed != parsed { failures.append("message \(index): reparsed message differs") }
            let before = parsed.allNames
            let after = reparsed.allNames
            if before.count != after.count || !zip(before, after).allSatisfy({ $0.isIdentical(to: $1) }) {
                let first = zip(before, after).first { !$0.isIdentical(to: $1) }
                failures.append(
                    "message \(index): names not identical, first \(first.map { "\($0) vs \($1)" } ?? "count")")
            }
            if try reparsed.serialized() != serialized { failures.append("message \(index): serialization not stable") }
            if serialized.count > input.count {
                failures.append("message \(index): serialized to \(serialized.count) bytes, input had \(input.count)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(5))")
        #expect(outputBytes <= inputBytes)
    }

    @Test("Messages of the large corpus serialize within the default 9000-byte datagram limit")
    func largeMessagesFitTheDefaultLimit() throws {
        let limit = MessageSizeLimit.default.payloadLimit(ipv6: true)
        #expect(limit == 9000 - 48)
        let inputs = try Fixture.large.messages
        #expect(inputs.allSatisfy { $0.count > 8000 }, "the large corpus is about messages close to the limit")
        for (index, input) in inputs.enumerated() {
            let message = try DNSMessage(parsing: input)
            let bytes = try message.serialized(limit: limit)
            #expect(bytes.count <= limit, "message \(index)")
        }
    }

    @Test("The realistic corpus holds the mix of mDNS traffic the golden tests rely on (corpus/STATS.md)")
    func realisticCorpusFacts() throws {
        let messages = try parseAll(.realistic)
        let records = messages.flatMap(\.allRecords)
        let queries = messages.filter { !$0.isResponse }
        let responses = messages.filter(\.isResponse)

        #expect(messages.count == 3004)
        #expect(queries.count == 1252)
        #expect(responses.count == 1752)
        #expect(messages.map(\.questions.count).reduce(0, +) == 7986)
        #expect(messages.map(\.answers.count).reduce(0, +) == 21107)
        #expect(messages.map(\.authorities.count).reduce(0, +) == 858)
        #expect(messages.map(\.additionals.count).reduce(0, +) == 2656)

        func count(_ type: RecordType) -> Int { records.filter { $0.type == type }.count }
        #expect(count(.ptr) == 15624)
        #expect(count(.srv) == 3015)
        #expect(count(.txt) == 2910)
        #expect(count(.a) == 1447)
        #expect(count(.aaaa) == 1123)
        #expect(count(.nsec) == 474)
        #expect(count(.hinfo) == 28)

        #expect(messages.filter(\.flags.isTruncated).count == 230)
        #expect(queries.filter { $0.questions.contains(where: \.unicastResponse) }.count == 642)
        #expect(queries.filter { !$0.authorities.isEmpty }.count == 312, "probes")
        #expect(queries.filter { !$0.answers.isEmpty }.count == 489, "queries with known answers")
        #expect(responses.filter { $0.allRecords.contains { $0.type == .nsec } }.count == 389)
        #expect(records.filter(\.cacheFlush).count == 5828)
        #expect(records.filter { $0.ttl == 0 }.count == 1143)
        #expect(messages.flatMap(\.questions).filter { $0.type == .any }.count == 387)

        // The record data were decoded, not kept opaque: the round trip exercises compression inside rdata.
        #expect(
            records.allSatisfy { record in
                guard case .nsec(let next, let types) = record.data else { return true }
                return next == record.name && types.contains(.a)  // the mDNS form of NSEC (RFC 6762 §6.1)
            })
        #expect(records.contains { if case .srv(let srv) = $0.data { !srv.target.isRoot } else { false } })
        #expect(!records.contains { if case .opaque = $0.data { true } else { false } })
        // Names in mixed case make the byte-for-byte name comparison of the round trip meaningful.
        #expect(messages.flatMap(\.allNames).contains { !$0.isIdentical(to: $0.lowercased) })
    }

    @Test("The large corpus holds messages of several hundred records each (corpus/STATS.md)")
    func largeCorpusFacts() throws {
        let messages = try parseAll(.large)
        let records = messages.flatMap(\.allRecords)
        #expect(messages.count == 240)
        #expect(messages.filter(\.isResponse).count == 192)
        #expect(messages.filter { !$0.isResponse && !$0.answers.isEmpty }.count == 48)
        #expect(messages.map(\.questions.count).reduce(0, +) == 144)
        #expect(messages.map(\.answers.count).reduce(0, +) == 60441)
        #expect(messages.map(\.additionals.count).reduce(0, +) == 14526)
        #expect(records.filter { $0.type == .nsec }.count == 6189)
        #expect(records.filter { $0.type == .srv }.count == 13017)
        #expect(records.filter(\.cacheFlush).count == 49436)
        #expect(messages.allSatisfy { $0.entryCount >= 140 })
    }
}
