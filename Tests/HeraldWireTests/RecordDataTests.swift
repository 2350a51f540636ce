import HeraldWire
import Testing

/// Addresses, NSEC type bit maps, record types, the class-field bits of mDNS and the header flags, each on its
/// own and through a message's wire form.
@Suite("Record data and header fields")
struct RecordDataTests {
    private func roundTrip(_ message: DNSMessage) throws -> DNSMessage {
        try DNSMessage(parsing: message.serialized())
    }

    // MARK: IPv4

    @Test("IPv4 dotted quads parse and print")
    func ipv4Text() throws {
        let address = try #require(IPv4Address("192.0.2.1"))
        #expect(address == IPv4Address(192, 0, 2, 1))
        #expect(address.value == 0xC000_0201)
        #expect(address.bytes == [192, 0, 2, 1])
        #expect(address.description == "192.0.2.1")
        #expect(IPv4Address("0.0.0.0")?.value == 0)
        #expect(IPv4Address("255.255.255.255")?.value == 0xFFFF_FFFF)
        #expect(HeraldWire.ipv4Group.description == "224.0.0.251")
    }

    @Test(
        "Malformed IPv4 text is refused",
        arguments: [
            "", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1..2.3", "1.2.3.", "a.b.c.d", " 1.2.3.4", "1.2.3.4 ",
            "+1.2.3.4", "1.-0.3.4", "1.2.3.0x4", "1234.1.1.1",
        ])
    func ipv4Invalid(text: String) {
        #expect(IPv4Address(text) == nil)
    }

    @Test("IPv4 link-local and reverse-mapping names")
    func ipv4LinkLocalAndReverse() throws {
        #expect(IPv4Address(169, 254, 10, 1).isLinkLocal)
        #expect(!IPv4Address(169, 253, 10, 1).isLinkLocal)
        #expect(!IPv4Address(192, 168, 1, 1).isLinkLocal)
        #expect(IPv4Address(192, 0, 2, 1).reverseName.isIdentical(to: "1.2.0.192.in-addr.arpa"))
    }

    // MARK: IPv6

    @Test(
        "IPv6 text parses and prints in the RFC 5952 form",
        arguments: [
            ("2001:db8::1", "2001:db8::1"),
            ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
            ("::", "::"),
            ("::1", "::1"),
            ("1::", "1::"),
            ("fe80::1:2", "fe80::1:2"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),  // §4.2.3: the first of equal runs
            ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),  // §4.2.2: one zero group is not shortened
            ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),  // §4.2.3: the longest run
            ("ff02::fb", "ff02::fb"),
            ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
            ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),  // §5: IPv4-mapped addresses in mixed notation
            ("::FFFF:c000:0201", "::ffff:192.0.2.1"),
            ("64:ff9b::192.0.2.1", "64:ff9b::c000:201"),
            ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
        ])
    func ipv6Text(input: String, printed: String) throws {
        let address = try #require(IPv6Address(input))
        #expect(address.description == printed)
        #expect(IPv6Address(printed) == address)
    }

    @Test("IPv6 groups and bytes are in network order")
    func ipv6Bytes() throws {
        let address = try #require(IPv6Address("::ffff:192.0.2.1"))
        #expect(address.groups == [0, 0, 0, 0, 0, 0xFFFF, 0xC000, 0x0201])
        #expect(address.bytes == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 1])
        #expect(IPv6Address(bytes: address.bytes) == address)
        #expect(IPv6Address(bytes: [UInt8](repeating: 0, count: 15)) == nil)
        #expect(HeraldWire.ipv6Group.description == "ff02::fb")
    }

    @Test(
        "Malformed IPv6 text is refused",
        arguments: [
            "", ":", ":::", "1::2::3", "12345::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::8",
            "::1:2:3:4:5:6:7:8", "fe80::1%eth0", "g::1", "::ffff:1.2.3", "::ffff:256.0.0.1", "1.2.3.4::",
            ":1::", "1::2:", "1:2:3:4:5:6:7:", "1.2.3.4", "+1::", "::-0", "::+ab",
        ])
    func ipv6Invalid(text: String) {
        #expect(IPv6Address(text) == nil)
    }

    @Test("IPv6 link-local is fe80::/10")
    func ipv6LinkLocal() throws {
        #expect(try #require(IPv6Address("fe80::1")).isLinkLocal)
        #expect(try #require(IPv6Address("febf:ffff::1")).isLinkLocal)
        #expect(try !#require(IPv6Address("fec0::1")).isLinkLocal)
        #expect(try !#require(IPv6Address("2001:db8::1")).isLinkLocal)
    }

    @Test("IPv6 reverse-mapping names are nibbles under ip6.arpa (RFC 3596 §2.5)")
    func ipv6Reverse() throws {
        let address = try #require(IPv6Address("4321:0:1:2:3:4:567:89ab"))
        #expect(
            address.reverseName.isIdentical(
                to: "b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa"))
    }

    // MARK: NSEC type bit maps

    @Test("Type bit maps are built from types, in any order, and read back")
    func typeBitmapFromTypes() {
        let types: [RecordType] = [.nsec, .srv, .a, .txt, .aaaa, .ptr, .a]
        let bitmap = TypeBitmap(types: types)
        // Window 0, 6 bytes: A (1), PTR (12), TXT (16), AAAA (28), SRV (33), NSEC (47).
        #expect(bitmap.encoded == [0, 6, 0x40, 0x08, 0x80, 0x08, 0x40, 0x01])
        #expect(bitmap.types == [.a, .ptr, .txt, .aaaa, .srv, .nsec])
        #expect(bitmap.description == "A PTR TXT AAAA SRV NSEC")
        #expect(TypeBitmap(types: []).encoded.isEmpty)
        #expect(TypeBitmap(types: [.a]).encoded == [0, 1, 0x40])
    }

    @Test("Type bit maps span windows in increasing order")
    func typeBitmapWindows() throws {
        let bitmap = TypeBitmap(types: [RecordType(65280), RecordType(257), .a])
        #expect(bitmap.encoded == [0, 1, 0x40, 1, 1, 0x40, 255, 1, 0x80])
        #expect(bitmap.types == [.a, RecordType(257), RecordType(65280)])
        #expect(try TypeBitmap(encoded: bitmap.encoded) == bitmap)
    }

    @Test("contains tells which types a bit map has")
    func typeBitmapContains() {
        let bitmap = TypeBitmap(types: [.a, .txt, RecordType(257)])
        #expect(bitmap.contains(.a) && bitmap.contains(.txt) && bitmap.contains(RecordType(257)))
        #expect(!bitmap.contains(.aaaa))  // beyond this window's length
        #expect(!bitmap.contains(.ptr))  // inside the window, bit clear
        #expect(!bitmap.contains(RecordType(256)))
        #expect(!bitmap.contains(RecordType(65280)))  // window absent
        #expect(!TypeBitmap(types: []).contains(.a))
    }

    @Test("Encoded type bit maps are checked (RFC 4034 §4.1.2)")
    func typeBitmapValidation() throws {
        #expect(try TypeBitmap(encoded: [0, 1, 0x40]).types == [.a])
        #expect(throws: TypeBitmapError.windowsOutOfOrder(offset: 3)) {
            try TypeBitmap(encoded: [1, 1, 0x40, 0, 1, 0x40])
        }
        #expect(throws: TypeBitmapError.badWindowLength(offset: 1, length: 0)) { try TypeBitmap(encoded: [0, 0]) }
        #expect(throws: TypeBitmapError.badWindowLength(offset: 1, length: 33)) {
            try TypeBitmap(encoded: [0, 33] + [UInt8](repeating: 0, count: 33))
        }
        #expect(throws: TypeBitmapError.truncated(offset: 0)) { try TypeBitmap(encoded: [0, 2, 0x40]) }
    }

    // MARK: Record types and classes

    @Test("Record types print as mnemonics or TYPEnnn, and parse back")
    func recordTypeMnemonics() {
        #expect(RecordType.aaaa.description == "AAAA")
        #expect(RecordType.nsec.description == "NSEC")
        #expect(RecordType(65280).description == "TYPE65280")
        #expect(RecordType(mnemonic: "srv") == .srv)
        #expect(RecordType(mnemonic: "AAAA") == .aaaa)
        #expect(RecordType(mnemonic: "ANY") == .any)
        #expect(RecordType(mnemonic: "TYPE65280") == RecordType(65280))
        #expect(RecordType(mnemonic: "type1") == .a)  // RFC 3597 §5: TYPE1 is A
        for text in ["", "FOO", "TYPE", "TYPE65536", "TYPE-1", "TYPE+1", "TYPE 1", "TYPE0x10"] {
            #expect(RecordType(mnemonic: text) == nil, "\(text)")
        }
        #expect(RecordClass.internet.description == "IN")
        #expect(RecordClass(3).description == "CLASS3")
    }

    @Test("Records of types without a decoder, such as TYPE65280 and MX, survive as opaque bytes")
    func unknownTypesRoundTrip() throws {
        let mxData: [UInt8] = [0, 10, 4] + Array("mail".utf8) + [7] + Array("example".utf8) + [0]
        let message = DNSMessage(
            flags: .authoritativeResponse,
            answers: [
                ResourceRecord(
                    name: "x.local", type: RecordType(65280), cacheFlush: true, ttl: 120, data: .opaque([1, 2, 3])),
                ResourceRecord(name: "x.local", type: .mx, ttl: 120, data: .opaque(mxData)),
                ResourceRecord(name: "x.local", type: RecordType(65281), ttl: 120, data: .opaque([])),
            ])
        let parsed = try roundTrip(message)
        #expect(parsed == message)
        #expect(parsed.answers.map(\.type) == [RecordType(65280), .mx, RecordType(65281)])
        #expect(parsed.answers[0].data == .opaque([1, 2, 3]))
        #expect(parsed.answers[0].cacheFlush)
        #expect(parsed.answers[1].data == .opaque(mxData))
        #expect(parsed.answers[0].data.description == "\\# 3 010203")
        #expect(parsed.answers[2].data.description == "\\# 0")
    }

    @Test("Decoded record data survive a round trip, and imply their type")
    func decodedDataRoundTrip() throws {
        let name: DNSName = "Host.local"
        let data: [RecordData] = [
            .a(IPv4Address(192, 0, 2, 1)), .aaaa(IPv6Address("fe80::1")!), .ptr("Svc._http._tcp.local"),
            .cname(name), .srv(SRVData(priority: 1, weight: 2, port: 631, target: name)),
            .txt(.empty), .hinfo(cpu: Array("ARM64".utf8), os: Array("Linux".utf8)),
            .nsec(next: name, types: TypeBitmap(types: [.a, .aaaa])),
        ]
        let records = data.map { ResourceRecord(name: name, ttl: 120, data: $0) }
        #expect(records.map(\.type) == [.a, .aaaa, .ptr, .cname, .srv, .txt, .hinfo, .nsec])
        let message = DNSMessage(flags: .authoritativeResponse, answers: records)
        #expect(try roundTrip(message) == message)
        #expect(data[4].description == "1 2 631 Host.local.")
        #expect(data[6].description == #""ARM64" "Linux""#)
        #expect(data[7].description == "Host.local. A AAAA")
    }

    // MARK: Class-field bits

    @Test("An OPT record keeps its whole class (the UDP payload size) and never gets the cache-flush bit")
    func optRecordClass() throws {
        let options: [UInt8] = [0, 4, 0, 6, 1, 2, 3, 4, 5, 6]  // EDNS0 Owner option
        let opt = ResourceRecord(
            name: .root, type: .opt, recordClass: RecordClass(0x9000), cacheFlush: true,
            ttl: 0x0000_8000, data: .opt(options))
        let bytes = try DNSMessage(additionals: [opt]).serialized()
        // Owner name (root) at 12, type at 13, class at 15.
        #expect(Array(bytes[13..<17]) == [0, 41, 0x90, 0x00])
        let parsed = try #require(try DNSMessage(parsing: bytes).additionals.first)
        #expect(parsed.recordClass.rawValue == 0x9000)
        #expect(!parsed.cacheFlush)
        #expect(parsed.ttl == 0x8000)
        #expect(parsed.data == .opt(options))

        var wire = WireBuilder(additionals: 1)
        wire.u8(0)
        wire.recordTail(type: .opt, classValue: 1440, ttl: 0, rdata: [])
        let small = try #require(try DNSMessage(parsing: wire.bytes).additionals.first)
        #expect(small.recordClass.rawValue == 1440 && !small.cacheFlush && small.data == .opt([]))
    }

    @Test("The cache-flush bit of records and the QU bit of questions round-trip through the class field")
    func cacheFlushAndUnicastBits() throws {
        let message = DNSMessage(
            questions: [
                DNSQuestion(name: "a.local", type: .a, unicastResponse: true),
                DNSQuestion(name: "b.local", type: .a),
            ],
            answers: [
                ResourceRecord(name: "a.local", ttl: 120, data: .a(IPv4Address(192, 0, 2, 1)), cacheFlush: true),
                ResourceRecord(name: "b.local", ttl: 120, data: .a(IPv4Address(192, 0, 2, 2))),
            ])
        let bytes = try message.serialized()
        // Questions: a.local (12–20), type and class at 21; b.local (25–28, "local" compressed), at 29.
        #expect(Array(bytes[21..<25]) == [0, 1, 0x80, 0x01])
        #expect(Array(bytes[29..<33]) == [0, 1, 0x00, 0x01])
        // Answers: a pointer to a.local (33), type and class at 35; a pointer to b.local (49), at 51.
        #expect(Array(bytes[33..<39]) == [0xC0, 12, 0, 1, 0x80, 0x01])
        #expect(Array(bytes[49..<55]) == [0xC0, 25, 0, 1, 0x00, 0x01])
        let parsed = try DNSMessage(parsing: bytes)
        #expect(parsed == message)
        #expect(parsed.questions.map(\.unicastResponse) == [true, false])
        #expect(parsed.questions.allSatisfy { $0.recordClass == .internet })
        #expect(parsed.answers.map(\.cacheFlush) == [true, false])
        #expect(parsed.answers.allSatisfy { $0.recordClass == .internet })
        #expect(parsed.questions[0].description == "a.local. IN A QU")
        #expect(parsed.answers[0].description == "a.local. 120 IN (flush) A 192.0.2.1")
    }

    // MARK: Header

    @Test("Header flags are read and written bit by bit")
    func headerFlagBits() {
        var flags = DNSFlags()
        flags.isResponse = true
        flags.isAuthoritative = true
        #expect(flags == .authoritativeResponse)
        #expect(flags.rawValue == 0x8400)
        flags.isTruncated = true
        flags.opcode = 5
        flags.responseCode = 3
        flags.recursionDesired = true
        flags.recursionAvailable = true
        #expect(flags.rawValue == 0x8000 | 5 << 11 | 0x0400 | 0x0200 | 0x0100 | 0x0080 | 3)
        #expect(flags.opcode == 5 && flags.responseCode == 3 && flags.isTruncated)
        flags.opcode = 0
        flags.isAuthoritative = false
        flags.responseCode = 0
        #expect(flags.rawValue == 0x8000 | 0x0200 | 0x0100 | 0x0080)
        flags.opcode = 0x1F  // only four bits are kept
        #expect(flags.opcode == 0xF && flags.isResponse && !flags.isAuthoritative)
    }

    @Test(
        "Header id and flags round-trip through the wire",
        arguments: [
            0x0000, 0x8400, 0x0200, 0x8000 | 0x2800 | 0x0400 | 0x0003, 0xFFFF, 0x7FFF,
        ] as [UInt16])
    func headerRoundTrip(raw: UInt16) throws {
        let message = DNSMessage(id: 0xBEEF, flags: DNSFlags(rawValue: raw))
        let bytes = try message.serialized()
        #expect(bytes == [0xBE, 0xEF, UInt8(raw >> 8), UInt8(raw & 0xFF), 0, 0, 0, 0, 0, 0, 0, 0])
        let parsed = try DNSMessage(parsing: bytes)
        #expect(parsed.id == 0xBEEF)
        #expect(parsed.flags.rawValue == raw)
        #expect(parsed.flags.isResponse == (raw & 0x8000 != 0))
        #expect(parsed.flags.isTruncated == (raw & 0x0200 != 0))
        #expect(parsed.flags.opcode == UInt8((raw >> 11) & 0xF))
        #expect(parsed.flags.responseCode == UInt8(raw & 0xF))
    }
}
