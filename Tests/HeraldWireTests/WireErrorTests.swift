import HeraldWire
import Testing

/// Malformed messages, built byte by byte: each must be refused with the exact rule it breaks and the offset of
/// the byte that breaks it. Offsets in comments count from the start of the message (the header is 0–11).
@Suite("Wire format errors")
struct WireErrorTests {
    private func expectError(
        _ bytes: [UInt8], at offset: Int, _ rule: DNSWireError.Rule,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: DNSWireError(offset: offset, rule: rule), sourceLocation: sourceLocation) {
            try DNSMessage(parsing: bytes)
        }
    }

    /// A message with one answer whose owner is the root (offset 12), so its RDLENGTH is at 21 and its data at 23.
    private func singleRecord(_ type: RecordType, rdlength: Int? = nil, rdata: [UInt8]) -> [UInt8] {
        var wire = WireBuilder(answers: 1)
        wire.u8(0)
        let lengthOffset = wire.recordTail(type: type, rdlength: rdlength, rdata: rdata)
        precondition(lengthOffset == 21)
        return wire.bytes
    }

    @Test("Offsets count from the start of the bytes parsed, also for a slice or raw memory")
    func offsetsAreRelativeToTheParsedBytes() throws {
        var wire = WireBuilder(questions: 1)
        wire.labels(["a"], terminated: false)
        wire.pointer(to: 12)  // a loop at 14
        wire.questionTail(type: .a)
        let padded = [0xEE, 0xEE, 0xEE] + wire.bytes
        let expected = DNSWireError(offset: 14, rule: .pointerLoop(target: 12))
        #expect(throws: expected) { try DNSMessage(parsing: padded[3...]) }
        #expect(throws: expected) {
            try padded.withUnsafeBytes { try DNSMessage(parsing: UnsafeRawBufferPointer(rebasing: $0[3...])) }
        }

        let message = try DNSMessage(parsing: try Corpus.realistic.get()[0])
        let bytes = try message.serialized()
        #expect(try DNSMessage(parsing: ([1, 2] + bytes + [3])[2..<(bytes.count + 2)]) == message)
    }

    // MARK: Header and sections

    @Test("A message shorter than the 12-byte header is refused at offset 0", arguments: [0, 1, 11])
    func headerTruncated(length: Int) {
        expectError([UInt8](repeating: 0, count: length), at: 0, .headerTruncated(length: length))
    }

    @Test("A bare 12-byte header is an empty message")
    func bareHeaderParses() throws {
        let message = try DNSMessage(parsing: [UInt8](repeating: 0, count: 12))
        #expect(message == DNSMessage())
    }

    @Test("A section count larger than the entries present is reported for each section")
    func countExceedsData() {
        // Two questions declared, one present (12–18).
        var questions = WireBuilder(questions: 2)
        questions.labels(["a"])
        questions.questionTail(type: .a)
        expectError(questions.bytes, at: 19, .countExceedsData(section: .question, declared: 2, found: 1))

        // Two answers declared, one present (12–26).
        var answers = WireBuilder(answers: 2)
        answers.u8(0)
        answers.recordTail(type: .a, rdata: [192, 0, 2, 1])
        expectError(answers.bytes, at: 27, .countExceedsData(section: .answer, declared: 2, found: 1))

        // One authority record declared, none present.
        expectError(
            WireBuilder(authorities: 1).bytes, at: 12,
            .countExceedsData(section: .authority, declared: 1, found: 0))

        // One answer (12–26), three additionals declared, one present (27–41).
        var additionals = WireBuilder(answers: 1, additionals: 3)
        for _ in 0..<2 {
            additionals.u8(0)
            additionals.recordTail(type: .a, rdata: [192, 0, 2, 1])
        }
        expectError(additionals.bytes, at: 42, .countExceedsData(section: .additional, declared: 3, found: 1))
    }

    @Test("A question that ends before its type and class is refused where its name ends")
    func questionTruncated() {
        var wire = WireBuilder(questions: 1)
        wire.labels(["a"])  // 12–14
        wire.u16(RecordType.ptr.rawValue)  // class missing
        expectError(wire.bytes, at: 15, .questionTruncated)

        var nameOnly = WireBuilder(questions: 1)
        nameOnly.labels(["a"])
        expectError(nameOnly.bytes, at: 15, .questionTruncated)
    }

    @Test("A record that ends before RDLENGTH is refused where its name ends")
    func recordTruncated() {
        var wire = WireBuilder(answers: 1)
        wire.u8(0)  // owner: the root, at 12
        wire.u16(RecordType.a.rawValue)
        wire.u16(1)
        wire.u32(120)  // RDLENGTH missing
        expectError(wire.bytes, at: 13, .recordTruncated)
    }

    // MARK: Names

    @Test("A name running past the end of the message is refused")
    func nameTruncated() {
        // A label of 5 bytes with only 2 present.
        expectError(WireBuilder(questions: 1).bytes + [5, 0x61, 0x62], at: 12, .nameTruncated)
        // A label without the terminating root label.
        expectError(WireBuilder(questions: 1).bytes + [1, 0x61], at: 14, .nameTruncated)
        // A compression pointer cut after its first byte.
        expectError(WireBuilder(questions: 1).bytes + [0xC0], at: 12, .nameTruncated)
        // A name inside PTR data that runs past RDLENGTH (2) although the message goes on.
        expectError(singleRecord(.ptr, rdlength: 2, rdata: [1, 0x61, 0]), at: 25, .nameTruncated)
    }

    @Test(
        "A length byte with the 0x40 or 0x80 prefix is an invalid label length",
        arguments: [UInt8(0x40), 0x7F, 0x80, 0xBF])
    func invalidLabelLength(byte: UInt8) {
        var first = WireBuilder(questions: 1)
        first.raw([byte, 0x61, 0x61, 0])
        first.questionTail(type: .a)
        expectError(first.bytes, at: 12, .invalidLabelLength(byte: byte))

        var second = WireBuilder(questions: 1)
        second.raw([1, 0x61, byte, 0x61, 0])
        second.questionTail(type: .a)
        expectError(second.bytes, at: 14, .invalidLabelLength(byte: byte))
    }

    @Test("A name longer than 255 bytes once its pointers are followed is refused")
    func nameTooLongThroughPointers() {
        // Each question adds a 63-byte label in front of the previous one: 65, 129, 193, then 257 bytes.
        var wire = WireBuilder(questions: 4)
        var previous = -1
        for question in 0..<4 {
            let start = wire.offset
            wire.label(repeating: UInt8(ascii: "a") + UInt8(question), count: 63)
            if previous < 0 { wire.u8(0) } else { wire.pointer(to: previous) }
            wire.questionTail(type: .ptr)
            previous = start
        }
        // The fourth name passes 255 bytes while reading the first question's label, at 12.
        expectError(wire.bytes, at: 12, .nameTooLong(length: 257))
    }

    @Test("A name of exactly 255 bytes through a pointer parses, one more byte is refused")
    func nameLengthBoundary() throws {
        func message(frontLabel: Int) -> [UInt8] {
            var wire = WireBuilder(questions: 2)
            for _ in 0..<3 { wire.label(repeating: 0x61, count: 63) }  // 12–204: 192 bytes of labels
            wire.u8(0)
            wire.questionTail(type: .ptr)
            wire.label(repeating: 0x62, count: frontLabel)
            wire.pointer(to: 12)
            wire.questionTail(type: .ptr)
            return wire.bytes
        }
        let parsed = try DNSMessage(parsing: message(frontLabel: 61))
        #expect(parsed.questions[1].name.wireLength == 255)
        // 63 + 192 + 1: the third label of the first name, at 12 + 64 + 64, makes it too long.
        expectError(message(frontLabel: 62), at: 140, .nameTooLong(length: 256))
    }

    @Test("A compression pointer past the end of the message is refused")
    func pointerOutOfBounds() {
        var far = WireBuilder(questions: 1)
        far.u16(0xFFFF)  // pointer to 0x3FFF
        far.questionTail(type: .a)
        expectError(far.bytes, at: 12, .pointerOutOfBounds(target: 0x3FFF))

        var justPast = WireBuilder(questions: 1)
        justPast.pointer(to: 18)  // the message has 18 bytes
        justPast.questionTail(type: .a)
        expectError(justPast.bytes, at: 12, .pointerOutOfBounds(target: 18))
    }

    @Test("A compression pointer to a later position is refused")
    func forwardPointer() {
        var wire = WireBuilder(questions: 2)
        wire.pointer(to: 16)  // 12: points at the second question's name
        wire.questionTail(type: .a)
        wire.labels(["a"])  // 16
        wire.questionTail(type: .a)
        expectError(wire.bytes, at: 12, .forwardPointer(target: 16))
    }

    @Test("A pointer to itself is a loop")
    func selfPointer() {
        var wire = WireBuilder(questions: 1)
        wire.pointer(to: 12)
        wire.questionTail(type: .a)
        expectError(wire.bytes, at: 12, .pointerLoop(target: 12))
    }

    @Test("A pointer back into the labels of the same name is a loop")
    func pointerIntoOwnLabels() {
        var toStart = WireBuilder(questions: 1)
        toStart.labels(["a"], terminated: false)  // 12
        toStart.pointer(to: 12)  // 14
        toStart.questionTail(type: .a)
        expectError(toStart.bytes, at: 14, .pointerLoop(target: 12))

        var toMiddle = WireBuilder(questions: 1)
        toMiddle.labels(["a", "b"], terminated: false)  // 12, 14
        toMiddle.pointer(to: 14)  // 16
        toMiddle.questionTail(type: .a)
        expectError(toMiddle.bytes, at: 16, .pointerLoop(target: 14))
    }

    @Test("A loop reached through an earlier pointer is found where it closes")
    func loopReachedThroughPointer() {
        // Opaque record data at 23 hold "\001a" and a pointer back to 23; a later owner name points at them.
        var wire = WireBuilder(answers: 2)
        wire.u8(0)
        wire.recordTail(type: RecordType(0xFF00), rdata: [1, 0x61, 0xC0, 23])  // data 23–26
        wire.pointer(to: 23)  // 27
        wire.recordTail(type: .a, rdata: [192, 0, 2, 1])
        expectError(wire.bytes, at: 25, .pointerLoop(target: 23))
    }

    // MARK: Record data

    @Test("RDLENGTH running past the end of the message is refused at the RDLENGTH field")
    func rdataTruncated() {
        expectError(
            singleRecord(.a, rdlength: 4, rdata: [192, 0]), at: 21,
            .rdataTruncated(type: .a, declared: 4, available: 2))
        expectError(
            singleRecord(.txt, rdlength: 300, rdata: [3, 0x61, 0x62, 0x63]), at: 21,
            .rdataTruncated(type: .txt, declared: 300, available: 4))
    }

    @Test("Record data whose structure disagrees with RDLENGTH are refused at the RDLENGTH field")
    func rdataLengthMismatch() {
        expectError(
            singleRecord(.a, rdata: [192, 0, 2, 1, 9]), at: 21,
            .rdataLengthMismatch(type: .a, declared: 5, used: 4))
        expectError(
            singleRecord(.a, rdata: [192, 0, 2]), at: 21,
            .rdataLengthMismatch(type: .a, declared: 3, used: 4))
        expectError(
            singleRecord(.aaaa, rdata: [UInt8](repeating: 0x20, count: 15)), at: 21,
            .rdataLengthMismatch(type: .aaaa, declared: 15, used: 16))
        // SRV: priority, weight, port, then a target name "h." that ends two bytes before RDLENGTH does.
        expectError(
            singleRecord(.srv, rdata: [0, 0, 0, 0, 0x1F, 0x90, 1, 0x68, 0, 9, 9]), at: 21,
            .rdataLengthMismatch(type: .srv, declared: 11, used: 9))
        // SRV too short to hold even the root as target.
        expectError(
            singleRecord(.srv, rdata: [0, 0, 0, 0, 0x1F, 0x90]), at: 21,
            .rdataLengthMismatch(type: .srv, declared: 6, used: 7))
        // PTR whose name "a." is shorter than RDLENGTH, uncompressed and compressed.
        expectError(
            singleRecord(.ptr, rdata: [1, 0x61, 0, 7, 7]), at: 21,
            .rdataLengthMismatch(type: .ptr, declared: 5, used: 3))
        expectError(
            singleRecord(.ptr, rdata: [0xC0, 12, 7]), at: 21,
            .rdataLengthMismatch(type: .ptr, declared: 3, used: 2))
        expectError(
            singleRecord(.cname, rdata: [0, 0]), at: 21,
            .rdataLengthMismatch(type: .cname, declared: 2, used: 1))
        // HINFO with a byte after its two strings, and HINFO with no data at all.
        expectError(
            singleRecord(.hinfo, rdata: [1, 0x78, 1, 0x79, 0]), at: 21,
            .rdataLengthMismatch(type: .hinfo, declared: 5, used: 4))
        expectError(
            singleRecord(.hinfo, rdata: []), at: 21,
            .rdataLengthMismatch(type: .hinfo, declared: 0, used: 2))
    }

    @Test("A TXT string running past the record data is refused at its length byte")
    func txtStringOverrun() {
        expectError(singleRecord(.txt, rdata: [5, 0x61, 0x62]), at: 23, .txtStringOverrun)
        expectError(singleRecord(.txt, rdata: [1, 0x61, 3, 0x62]), at: 25, .txtStringOverrun)
    }

    @Test("A HINFO string running past the record data is refused at its length byte")
    func hinfoOverrun() {
        expectError(singleRecord(.hinfo, rdata: [5, 0x61]), at: 23, .characterStringOverrun)
        // The CPU string fills the data: no room for the OS string.
        expectError(singleRecord(.hinfo, rdata: [1, 0x78]), at: 23, .characterStringOverrun)
        expectError(singleRecord(.hinfo, rdata: [1, 0x78, 5, 0x79]), at: 25, .characterStringOverrun)
    }

    @Test("NSEC type bit maps breaking RFC 4034 §4.1.2 are refused at the offending byte")
    func invalidTypeBitmap() {
        // Next domain name: the root (23), so the bit maps start at 24.
        func nsec(_ bitmap: [UInt8]) -> [UInt8] { singleRecord(.nsec, rdata: [0] + bitmap) }
        func reason(_ error: TypeBitmapError) -> DNSWireError.Rule { .invalidTypeBitmap(reason: "\(error)") }

        expectError(nsec([0, 1, 0x40, 0, 1, 0x40]), at: 27, reason(.windowsOutOfOrder(offset: 3)))
        expectError(nsec([1, 1, 0x40, 0, 1, 0x40]), at: 27, reason(.windowsOutOfOrder(offset: 3)))
        expectError(nsec([0, 0]), at: 25, reason(.badWindowLength(offset: 1, length: 0)))
        expectError(
            nsec([0, 33] + [UInt8](repeating: 0xFF, count: 33)), at: 25,
            reason(.badWindowLength(offset: 1, length: 33)))
        expectError(nsec([0, 5, 0x40]), at: 24, reason(.truncated(offset: 0)))
        expectError(nsec([0]), at: 24, reason(.truncated(offset: 0)))
        expectError(nsec([0, 1, 0x40, 1]), at: 27, reason(.truncated(offset: 3)))
    }

    @Test("Valid NSEC bit maps, including none, several windows and 32-byte windows, are accepted")
    func validTypeBitmaps() throws {
        for bitmap: [UInt8] in [
            [], [0, 1, 0x40], [0, 1, 0x40, 1, 1, 0x40], [0, 32] + [UInt8](repeating: 0xFF, count: 32),
        ] {
            let message = try DNSMessage(parsing: singleRecord(.nsec, rdata: [0] + bitmap))
            guard case .nsec(let next, let types) = message.answers[0].data else {
                Issue.record("not NSEC data")
                continue
            }
            #expect(next.isRoot)
            #expect(types.encoded == bitmap)
        }
    }

    // MARK: Compression inside record data

    @Test("Names compressed inside PTR, SRV, CNAME and NSEC data are followed")
    func compressedNamesInsideRecordData() throws {
        var wire = WireBuilder(flags: 0x8400, answers: 4, additionals: 1)
        // 12: _http(12)._tcp(18).local(23) PTR My Printer(40) + pointer to 12
        wire.labels(["_http", "_tcp", "local"])
        wire.recordTail(type: .ptr, ttl: 4500, rdata: [10] + Array("My Printer".utf8) + [0xC0, 12])
        // 53: pointer to 40 SRV 0 0 8080 printer(71) + pointer to local (23)
        wire.pointer(to: 40)
        wire.recordTail(
            type: .srv, classValue: 0x8001,
            rdata: [0, 0, 0, 0, 0x1F, 0x90, 7] + Array("printer".utf8) + [0xC0, 23])
        // 81: www + pointer to local CNAME pointer to printer.local (71)
        wire.labels(["www"], terminated: false)
        wire.pointer(to: 23)
        wire.recordTail(type: .cname, rdata: [0xC0, 71])
        // 99: pointer to 40 NSEC, next name a pointer to 40 (as python-zeroconf writes it), types TXT SRV
        wire.pointer(to: 40)
        wire.recordTail(type: .nsec, classValue: 0x8001, rdata: [0xC0, 40, 0, 5, 0, 0, 0x80, 0, 0x40])
        // Additional: pointer to printer.local A
        wire.pointer(to: 71)
        wire.recordTail(type: .a, classValue: 0x8001, rdata: [192, 0, 2, 7])

        let message = try DNSMessage(parsing: wire.bytes)
        let instance: DNSName = "My Printer._http._tcp.local"
        let host: DNSName = "printer.local"
        try #require(message.answers.count == 4 && message.additionals.count == 1)

        #expect(message.answers[0].data == .ptr(instance))
        #expect(message.answers[1].name.isIdentical(to: instance))
        guard case .srv(let srv) = message.answers[1].data else {
            Issue.record("not SRV")
            return
        }
        #expect(srv.port == 8080 && srv.target.isIdentical(to: host))
        #expect(message.answers[1].cacheFlush)
        #expect(message.answers[2].name.isIdentical(to: "www.local"))
        #expect(message.answers[2].data == .cname(host))
        guard case .nsec(let next, let types) = message.answers[3].data else {
            Issue.record("not NSEC")
            return
        }
        #expect(next.isIdentical(to: instance))
        #expect(types.types == [.txt, .srv])
        #expect(message.additionals[0].name.isIdentical(to: host))
        #expect(message.additionals[0].data == .a(IPv4Address(192, 0, 2, 7)))

        // Written back, the message compresses the same names the same way.
        let written = try message.serialized()
        #expect(written == wire.bytes)
        #expect(try DNSMessage(parsing: written) == message)
    }

    @Test("Owner names that are pointers to any earlier name, however far back, resolve to that name")
    func pointersToManyEarlierNames() throws {
        // 40 questions with distinct names, then 40 answers whose owners point at them in reverse order.
        var wire = WireBuilder(questions: 40, answers: 40)
        var starts: [Int] = []
        for index in 0..<40 {
            starts.append(wire.offset)
            if index == 0 {
                wire.labels(["Host-0", "local"])
            } else {
                wire.labels(["Host-\(index)"], terminated: false)
                wire.pointer(to: starts[0] + 7)  // "local" of the first name
            }
            wire.questionTail(type: .a)
        }
        for index in (0..<40).reversed() {
            wire.pointer(to: starts[index])
            wire.recordTail(type: .a, rdata: [10, 0, 0, UInt8(index)])
        }
        let message = try DNSMessage(parsing: wire.bytes)
        for (position, record) in message.answers.enumerated() {
            let index = 39 - position
            #expect(record.name.isIdentical(to: try DNSName("Host-\(index).local")))
            #expect(record.name == message.questions[index].name)
            #expect(record.data == .a(IPv4Address(10, 0, 0, UInt8(index))))
        }
    }

    // MARK: Random mutations

    @Test("Randomly mutated corpus messages either parse and round-trip or throw a DNSWireError")
    func randomMutations() throws {
        let corpus = try Corpus.realistic.get()
        var random = SplitMix64(seed: 0x4845_5241_4C44)  // "HERALD"
        let interesting: [UInt8] = [0x00, 0x01, 0x3F, 0x40, 0x80, 0xC0, 0xC1, 0xFF]
        var parsed = 0
        var rejected = 0
        var rules = Set<String>()
        var failures: [String] = []

        for messageIndex in stride(from: 0, to: corpus.count, by: 15) {
            let original = corpus[messageIndex]
            for round in 0..<20 {
                var bytes = original
                let mutations = Int.random(in: 1...3, using: &random)
                for _ in 0..<mutations {
                    let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0 where !bytes.isEmpty:  // flip one bit
                        bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                    case 1:  // truncate
                        bytes.removeSubrange(min(position, bytes.count)...)
                    case 2:  // insert random bytes
                        let inserted = (0..<Int.random(in: 1...8, using: &random)).map { _ in
                            UInt8.random(in: 0...255, using: &random)
                        }
                        bytes.insert(contentsOf: inserted, at: min(position, bytes.count))
                    case 3 where !bytes.isEmpty:  // an interesting byte (label types, pointers)
                        bytes[position] = interesting.randomElement(using: &random)!
                    case 4 where !bytes.isEmpty:  // delete a few bytes
                        bytes.removeSubrange(
                            position..<min(bytes.count, position + Int.random(in: 1...4, using: &random)))
                    case 5 where position + 1 < bytes.count:  // a compression pointer to anywhere
                        let target = Int.random(in: 0..<(bytes.count + 16), using: &random)
                        bytes[position] = 0xC0 | UInt8((target >> 8) & 0x3F)
                        bytes[position + 1] = UInt8(target & 0xFF)
                    default:
                        break
                    }
                }

                let message: DNSMessage
                do {
                    message = try DNSMessage(parsing: bytes)
                } catch {
                    rejected += 1
                    rules.insert("\(error.rule)".prefix { $0 != "(" }.description)
                    continue
                }
                parsed += 1
                do {
                    let written = try message.serialized()
                    let again = try DNSMessage(parsing: written)
                    if again != message { failures.append("message \(messageIndex) round \(round): reparsed differs") }
                    if try again.serialized() != written {
                        failures.append("message \(messageIndex) round \(round): unstable")
                    }
                } catch {
                    failures.append("message \(messageIndex) round \(round): \(error)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(5))")
        // The mutations reach both outcomes and many different rules.
        #expect(parsed > 400)
        #expect(rejected > 400)
        #expect(rules.count >= 10, "rules seen: \(rules.sorted())")
    }
}
