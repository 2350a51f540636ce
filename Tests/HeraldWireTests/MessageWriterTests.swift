import HeraldWire
import Testing

/// The compressing writer (RFC 1035 §4.1.4, RFC 6762 §18.14), its size limit, and the packing of known answers
/// over several query messages (RFC 6762 §7.2).
@Suite("Message writer")
struct MessageWriterTests {
    private let service: DNSName = "_http._tcp.local"
    private let instance: DNSName = "My Printer._http._tcp.local"
    private let host: DNSName = "printer.local"

    /// The answer a responder sends for one instance: PTR, then SRV, TXT and A as additional records.
    private func instanceResponse() throws -> DNSMessage {
        DNSMessage(
            flags: .authoritativeResponse,
            answers: [ResourceRecord(name: service, ttl: 4500, data: .ptr(instance))],
            additionals: [
                ResourceRecord(name: instance, ttl: 120, data: .srv(SRVData(port: 80, target: host)), cacheFlush: true),
                ResourceRecord(
                    name: instance, ttl: 4500, data: .txt(try TXTRecord(["txtvers": Array("1".utf8)])),
                    cacheFlush: true),
                ResourceRecord(name: host, ttl: 120, data: .a(IPv4Address(192, 0, 2, 7)), cacheFlush: true),
            ])
    }

    // MARK: Compression

    @Test("A PTR, SRV, TXT and A response writes each name suffix once and points to it afterwards")
    func instanceResponseIsCompressed() throws {
        let bytes = try instanceResponse().serialized()
        // 12 header
        // 12 _http(12)._tcp(18).local(23) + root = 18 bytes, fixed fields 30–39, PTR data 40–52:
        //    "My Printer" (40) + pointer to 12
        // 53 pointer to 40, fixed fields, SRV data 65–80: 0 0 80, "printer" (71) + pointer to local (23)
        // 81 pointer to 40, fixed fields, TXT data 93–102
        // 103 pointer to 71, fixed fields, A data 115–118
        #expect(bytes.count == 119)
        #expect(Array(bytes[51..<55]) == [0xC0, 12, 0xC0, 40])
        #expect(Array(bytes[71..<81]) == [7] + Array("printer".utf8) + [0xC0, 23])
        #expect(Array(bytes[81..<83]) == [0xC0, 40])
        #expect(Array(bytes[103..<105]) == [0xC0, 71])
        // Every label is written once.
        for label in ["_http", "_tcp", "local", "My Printer", "printer"] {
            #expect(occurrences(of: [UInt8(label.utf8.count)] + Array(label.utf8), in: bytes) == 1, "\(label)")
        }
        let parsed = try DNSMessage(parsing: bytes)
        #expect(parsed == (try instanceResponse()))
        #expect(zip(parsed.allNames, try instanceResponse().allNames).allSatisfy { $0.isIdentical(to: $1) })
    }

    @Test("Names inside SRV, PTR, CNAME and NSEC data are compressed, and compress later names")
    func namesInsideRecordDataAreCompressed() throws {
        let message = DNSMessage(
            flags: .authoritativeResponse,
            answers: [
                // The target comes first, inside data: the owner names after it point into it.
                ResourceRecord(name: "www.local", ttl: 120, data: .cname(host)),
                ResourceRecord(name: host, ttl: 120, data: .nsec(next: host, types: TypeBitmap(types: [.a]))),
            ])
        let bytes = try message.serialized()
        // 12 www(12).local(16) + root (22), fixed 23–32, CNAME data 33–42: printer(33) + pointer to 16
        // 43 pointer to 33, fixed 45–54, NSEC data 55–59: pointer to 33, window 0 length 1 0x40
        #expect(bytes.count == 60)
        #expect(Array(bytes[33..<45]) == [7] + Array("printer".utf8) + [0xC0, 16, 0xC0, 33])
        #expect(Array(bytes[53..<60]) == [0, 5, 0xC0, 33, 0, 1, 0x40])
        #expect(try DNSMessage(parsing: bytes) == message)

        // NSEC next name written inside data after its owner, as responders write it (RFC 6762 §6.1).
        let nsec = DNSMessage(additionals: [
            ResourceRecord(
                name: instance, ttl: 120,
                data: .nsec(next: instance, types: TypeBitmap(types: [.txt, .srv])))
        ])
        let nsecBytes = try nsec.serialized()
        // Owner 12–40, fixed 41–50 (RDLENGTH at 49), data: pointer to 12 and the 7-byte bit map.
        #expect(Array(nsecBytes[49...]) == [0, 9, 0xC0, 12, 0, 5, 0, 0, 0x80, 0, 0x40])
    }

    @Test("Names that differ only in case are not merged: each keeps its exact case")
    func caseDifferentNamesAreNotMerged() throws {
        let upper: DNSName = "_HTTP._tcp.local"
        let message = DNSMessage(answers: [
            ResourceRecord(name: service, ttl: 4500, data: .ptr("a._http._tcp.local")),
            ResourceRecord(name: upper, ttl: 4500, data: .ptr("b._HTTP._tcp.local")),
            ResourceRecord(name: "printer.LOCAL", ttl: 120, data: .a(IPv4Address(192, 0, 2, 1))),
        ])
        let bytes = try message.serialized()
        #expect(occurrences(of: [5] + Array("_http".utf8), in: bytes) == 1)
        #expect(occurrences(of: [5] + Array("_HTTP".utf8), in: bytes) == 1)
        #expect(occurrences(of: [5] + Array("LOCAL".utf8), in: bytes) == 1)
        #expect(occurrences(of: [4] + Array("_tcp".utf8), in: bytes) == 1, "the common suffix is still shared")
        let parsed = try DNSMessage(parsing: bytes)
        #expect(parsed.allNames.count == message.allNames.count)
        for (written, read) in zip(message.allNames, parsed.allNames) {
            #expect(read.isIdentical(to: written), "\(written) came back as \(read)")
        }
    }

    @Test("Long names such as IPv6 reverse-mapping names (34 labels) share their common suffix")
    func longNamesAreCompressed() throws {
        let first = try #require(IPv6Address("fe80::1")).reverseName
        let second = try #require(IPv6Address("fe80::2")).reverseName
        let eight: DNSName = "a.b.c.d.e.f.g.h"
        let nine: DNSName = "z.a.b.c.d.e.f.g.h"
        let message = DNSMessage(
            flags: .authoritativeResponse,
            answers: [
                ResourceRecord(name: first, ttl: 120, data: .ptr(host)),
                ResourceRecord(name: second, ttl: 120, data: .ptr(host)),
                ResourceRecord(name: eight, ttl: 120, data: .ptr(nine)),
                ResourceRecord(name: nine, ttl: 120, data: .ptr(eight)),
            ])
        let bytes = try message.serialized()
        // 12 + first: 32 nibbles, ip6, arpa (78) + fixed (10) + printer.local (15) = 115
        // + second: "2" and a pointer (4) + 10 + pointer (2) = 131
        // + eight (17) + 10 + "z" and a pointer (4) = 162; + pointer + 10 + pointer = 176
        #expect(first.labelCount == 34 && first.wireLength == 74)
        #expect(bytes.count == 12 + 74 + 10 + 15 + 4 + 10 + 2 + 17 + 10 + 4 + 2 + 10 + 2)
        let parsed = try DNSMessage(parsing: bytes)
        #expect(parsed == message)
        #expect(zip(parsed.allNames, message.allNames).allSatisfy { $0.isIdentical(to: $1) })
    }

    @Test("Names past the 14-bit pointer range are written in full and still parse")
    func namesBeyondPointerRange() throws {
        // 20 KB of opaque data pushes later names past offset 0x3FFF.
        let filler = ResourceRecord(
            name: "filler.local", type: RecordType(65280), ttl: 120,
            data: .opaque([UInt8](repeating: 0xAB, count: 20_000)))
        let late = ResourceRecord(name: "late.example", ttl: 120, data: .ptr("target.late.example"))
        let message = DNSMessage(answers: [filler, late, late])
        let bytes = try message.serialized()
        let parsed = try DNSMessage(parsing: bytes)
        #expect(parsed == message)
        #expect(zip(parsed.allNames, message.allNames).allSatisfy { $0.isIdentical(to: $1) })
    }

    // MARK: Size limit

    @Test("A record that does not fit is refused and leaves the message exactly as it was")
    func refusedAppendLeavesMessageUnchanged() throws {
        var writer = MessageWriter(flags: .authoritativeResponse, limit: 200)
        let fits1 = writer.append(DNSQuestion(name: service, type: .ptr))
        #expect(fits1)
        var appended = 0
        let big = try TXTRecord(entries: [TXTEntry(key: "k", value: [UInt8](repeating: 0x41, count: 200))])
        while writer.append(
            ResourceRecord(
                name: try service.prepending(label: "Instance \(appended)"), ttl: 4500,
                data: .ptr(instance)), to: .answer)
        {
            appended += 1
        }
        #expect(appended > 2)
        let before = writer.bytes
        // Refused: a new name and a record too big for the room left.
        let refused = ResourceRecord(name: "Brand New Name.example", ttl: 120, data: .txt(big))
        let fits2 = writer.append(refused, to: .answer)
        #expect(!fits2)
        #expect(writer.bytes == before)
        #expect(writer.count(of: .answer) == appended)
        #expect(writer.bytes.count <= 200)

        let parsed = try DNSMessage(parsing: writer.message)
        #expect(parsed.questions.count == 1)
        #expect(parsed.answers.count == appended)

        // The refused record's name was forgotten with its bytes: a later record with that name still parses.
        var small = MessageWriter(limit: 120)
        let fits3 = small.append(ResourceRecord(name: "x.example", ttl: 1, data: .a(IPv4Address(0))), to: .answer)
        #expect(fits3)
        let mark = small.bytes
        let fits4 = small.append(ResourceRecord(name: "Brand New Name.example", ttl: 120, data: .txt(big)), to: .answer)
        #expect(!fits4)
        #expect(small.bytes == mark)
        // Other bytes now take the place of the refused name.
        let fits5 = small.append(ResourceRecord(name: "y.example", ttl: 1, data: .a(IPv4Address(2))), to: .answer)
        #expect(fits5)
        let fits6 = small.append(
            ResourceRecord(name: "Brand New Name.example", ttl: 120, data: .a(IPv4Address(1))), to: .additional)
        #expect(fits6)
        let after = try DNSMessage(parsing: small.message)
        #expect(after.answers.map(\.name) == ["x.example", "y.example"])
        #expect(after.additionals.first?.name.isIdentical(to: "Brand New Name.example") == true)
    }

    @Test("A question that does not fit is refused and leaves the message unchanged")
    func refusedQuestionLeavesMessageUnchanged() throws {
        var writer = MessageWriter(limit: 40)
        let fits7 = writer.append(DNSQuestion(name: "a.local", type: .a))  // 12 + 9 + 4 = 25
        #expect(fits7)
        let before = writer.bytes
        let fits8 = writer.append(DNSQuestion(name: "something-long.example", type: .aaaa))
        #expect(!fits8)
        #expect(writer.bytes == before)
        #expect(writer.questionCount == 1)
        let fits9 = writer.append(DNSQuestion(name: "b.local", type: .a))  // 4 + 4 more: 33
        #expect(fits9)
        #expect(try DNSMessage(parsing: writer.message).questions.map(\.name) == ["a.local", "b.local"])
    }

    @Test("serialized(limit:) throws messageTooLarge with the size the message needs")
    func serializedThrowsWhenTooLarge() throws {
        let message = try instanceResponse()
        let size = try message.serialized().count
        #expect(try message.serialized(limit: size).count == size)
        #expect(throws: DNSWireError(offset: size - 1, rule: .messageTooLarge(size: size, limit: size - 1))) {
            try message.serialized(limit: size - 1)
        }
    }

    @Test("serialized(limit:) never returns more bytes than the limit, even for a bare header")
    func serializedHonoursLimitsBelowTheHeader() {
        #expect(throws: DNSWireError(offset: 11, rule: .messageTooLarge(size: 12, limit: 11))) {
            try DNSMessage().serialized(limit: 11)
        }
    }

    @Test("The size limit is a datagram of 1500 to 9000 bytes less the IP and UDP headers (RFC 6762 §17)")
    func messageSizeLimit() {
        #expect(MessageSizeLimit.default.datagramSize == 9000)
        #expect(MessageSizeLimit.default.payloadLimit(ipv6: false) == 9000 - 28)
        let ethernet = MessageSizeLimit(datagramSize: 1500)
        #expect(ethernet.payloadLimit(ipv6: true) == 1452)
        #expect(ethernet.payloadLimit(ipv6: false) == 1472)
        #expect(MessageSizeLimit(datagramSize: 100).datagramSize == 1500)
        #expect(MessageSizeLimit(datagramSize: 65_000).datagramSize == 9000)
        #expect(MessageWriter().limit == 9000 - 48)
    }

    @Test("Messages with several records fit the link's MTU, never more than the limit, and at least 576 bytes")
    func sharedLimitFollowsTheMTU() {
        let limit = MessageSizeLimit.default
        #expect(limit.sharedPayloadLimit(ipv6: false) == 1500 - 28)
        #expect(limit.sharedPayloadLimit(ipv6: true, mtu: 1280) == 1280 - 48)
        #expect(limit.sharedPayloadLimit(ipv6: false, mtu: 9000) == 9000 - 28)
        #expect(limit.sharedPayloadLimit(ipv6: false, mtu: 65_536) == 9000 - 28)
        #expect(MessageSizeLimit(datagramSize: 4000).sharedPayloadLimit(ipv6: false, mtu: 9000) == 4000 - 28)
        #expect(limit.sharedPayloadLimit(ipv6: false, mtu: 68) == 576 - 28)
    }

    @Test("A TTL with its top bit set is read as zero (RFC 2181 §8); OPT's TTL field is kept as it is")
    func ttlWithTopBitSet() throws {
        for (sent, read) in [
            (UInt32(0x8000_0000), UInt32(0)), (0xFFFF_FFFF, 0), (0x7FFF_FFFF, 0x7FFF_FFFF), (120, 120),
        ] {
            var message = DNSMessage(
                flags: DNSFlags(rawValue: 0x8400),
                answers: [ResourceRecord(name: "box.local.", ttl: sent, data: .a(IPv4Address(10, 0, 0, 1)))])
            message.additionals = [
                ResourceRecord(
                    name: .root, type: .opt, recordClass: RecordClass(1440), cacheFlush: false,
                    ttl: 0x8000_8000, data: .opaque([]))
            ]
            let parsed = try DNSMessage(parsing: try message.serialized())
            #expect(parsed.answers.first?.ttl == read, "TTL \(sent)")
            // The DO bit of EDNS(0) lives in OPT's TTL field, as does the extended RCODE (its top byte).
            #expect(parsed.additionals.first?.ttl == 0x8000_8000)
        }
    }

    // MARK: Known-answer packing

    @Test("300 known answers are packed over several messages with TC on all but the last")
    func queryPackerSplitsKnownAnswers() throws {
        let limit = MessageSizeLimit(datagramSize: 1500).payloadLimit(ipv6: true)
        let questions = [DNSQuestion(name: service, type: .ptr), DNSQuestion(name: "_ipp._tcp.local", type: .ptr)]
        let knownAnswers = try (0..<300).map { index in
            ResourceRecord(
                name: service, ttl: 4500 - UInt32(index),
                data: .ptr(try service.prepending(label: "Printer \(index) on Floor \(index % 7)")))
        }
        let messages = QueryPacker.pack(questions: questions, knownAnswers: knownAnswers, limit: limit)
        #expect(messages.count > 3)
        #expect(messages.allSatisfy { $0.count <= limit })
        let parsed = try messages.map { try DNSMessage(parsing: $0) }

        #expect(parsed.dropLast().allSatisfy { $0.flags.isTruncated })
        #expect(parsed.last?.flags.isTruncated == false)
        #expect(parsed.allSatisfy { !$0.isResponse && $0.authorities.isEmpty && $0.additionals.isEmpty })
        #expect(parsed.first?.questions == questions)
        #expect(parsed.dropFirst().allSatisfy { $0.questions.isEmpty })

        let union = parsed.flatMap(\.answers)
        #expect(union == knownAnswers)
        #expect(zip(union, knownAnswers).allSatisfy { $0.ttl == $1.ttl && $0.data == $1.data })
        // Each message but the last was filled: its successor's first answer would not have fitted.
        for (index, message) in parsed.dropLast().enumerated() {
            let next = parsed[index + 1].answers[0]
            var writer = MessageWriter(limit: limit)
            for question in message.questions { writer.append(question) }
            for answer in message.answers { writer.append(answer, to: .answer) }
            let fits10 = writer.append(next, to: .answer)
            #expect(!fits10, "message \(index) had room for more")
        }
    }

    @Test("Known answers that fit in one message are sent without TC")
    func queryPackerSingleMessage() throws {
        let knownAnswers = [ResourceRecord(name: service, ttl: 4500, data: .ptr(instance))]
        let messages = QueryPacker.pack(
            questions: [DNSQuestion(name: service, type: .ptr)], knownAnswers: knownAnswers,
            limit: 1452)
        #expect(messages.count == 1)
        let message = try DNSMessage(parsing: try #require(messages.first))
        #expect(!message.flags.isTruncated)
        #expect(message.answers == knownAnswers)
        #expect(QueryPacker.pack(questions: [], knownAnswers: [], limit: 1452).isEmpty)
    }
}
