import HeraldWire
import Testing

/// TXT records as DNS-SD reads and writes them (RFC 6763 §6).
@Suite("TXT records")
struct TXTRecordTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Record data made of the given strings, each preceded by its length.
    private func rdata(_ strings: [String]) -> [UInt8] {
        strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    @Test("The empty TXT record is a single zero byte (§6.1)")
    func emptyRecord() throws {
        #expect(TXTRecord.empty.rdata == [0])
        #expect(try TXTRecord(strings: []).rdata == [0])
        #expect(try TXTRecord(entries: []).rdata == [0])
        #expect(try TXTRecord([:]).rdata == [0])
        #expect(TXTRecord.empty.entries.isEmpty)
        #expect(TXTRecord.empty.strings == [[]])
    }

    @Test("A key alone, key= and key=value are three different things (§6.4)")
    func booleanEmptyAndValuedKeys() throws {
        let record = try TXTRecord(["paper": nil, "note": [], "txtvers": bytes("1")])
        #expect(record.rdata == rdata(["paper", "note=", "txtvers=1"]))
        #expect(
            record.entries == [
                TXTEntry(key: "paper", value: nil), TXTEntry(key: "note", value: []),
                TXTEntry(key: "txtvers", string: "1"),
            ])
        #expect(record["paper"] == .some(nil))
        #expect(record["note"] == .some([]))
        #expect(record["txtvers"] == .some(bytes("1")))
        #expect(record["missing"] == nil)
        #expect(record.contains(key: "paper") && record.contains(key: "note") && !record.contains(key: "missing"))
    }

    @Test("Keys are looked up case-insensitively and keep the case they were sent in")
    func caseInsensitiveKeys() throws {
        let record = try TXTRecord(rdata: rdata(["PaperSize=A4"]))
        #expect(record["papersize"] == .some(bytes("A4")))
        #expect(record["PAPERSIZE"] == .some(bytes("A4")))
        #expect(record.entries.first?.key == "PaperSize")
    }

    @Test("Only the first occurrence of a key counts (§6.4)")
    func firstOccurrenceWins() throws {
        let record = try TXTRecord(rdata: rdata(["a=1", "A=2", "b", "a=3", "B=x"]))
        #expect(record.entries == [TXTEntry(key: "a", string: "1"), TXTEntry(key: "b", value: nil)])
        #expect(record["a"] == .some(bytes("1")))
        #expect(record["B"] == .some(nil))
        #expect(record.strings.count == 5, "the record keeps every string on the wire")
    }

    @Test("Strings that are empty or start with '=' are ignored (§6.4)")
    func stringsWithoutKeyAreIgnored() throws {
        let record = try TXTRecord(rdata: rdata(["=value", "", "k=v", "=", "=k=w"]))
        #expect(record.entries == [TXTEntry(key: "k", string: "v")])
    }

    @Test("Values are arbitrary bytes, and only the first '=' separates the key (§6.5)")
    func binaryValues() throws {
        let value: [UInt8] = [0x00, 0xFF, UInt8(ascii: "="), 0x0A, 0x80]
        let record = try TXTRecord(entries: [TXTEntry(key: "blob", value: value)])
        #expect(record.rdata == [UInt8(5 + value.count)] + bytes("blob=") + value)
        #expect(record["blob"] == .some(value))
        let parsed = try TXTRecord(rdata: rdata(["k=a=b"]))
        #expect(parsed.entries == [TXTEntry(key: "k", string: "a=b")])
    }

    @Test("Building refuses keys RFC 6763 §6.4 forbids")
    func invalidKeysAreRefused() {
        #expect(throws: TXTRecordError.emptyKey) { try TXTRecord(entries: [TXTEntry(key: "", string: "v")]) }
        #expect(throws: TXTRecordError.invalidKey("a=b")) { try TXTRecord(entries: [TXTEntry(key: "a=b", value: nil)]) }
        #expect(throws: TXTRecordError.invalidKey("bell\u{7}")) {
            try TXTRecord(entries: [TXTEntry(key: "bell\u{7}", value: nil)])
        }
        #expect(throws: TXTRecordError.invalidKey("del\u{7F}")) {
            try TXTRecord(entries: [TXTEntry(key: "del\u{7F}", value: nil)])
        }
        #expect(throws: TXTRecordError.invalidKey("clé")) { try TXTRecord(entries: [TXTEntry(key: "clé", value: nil)]) }
        // Space and the other printable characters are allowed.
        #expect(throws: Never.self) { try TXTRecord(entries: [TXTEntry(key: "a b~!", value: nil)]) }
    }

    @Test("Building refuses a key given twice, compared case-insensitively")
    func duplicateKeysAreRefused() {
        #expect(throws: TXTRecordError.duplicateKey("KEY")) {
            try TXTRecord(entries: [TXTEntry(key: "Key", string: "1"), TXTEntry(key: "KEY", value: nil)])
        }
        #expect(throws: TXTRecordError.duplicateKey("a")) { try TXTRecord(["a": nil, "a": []]) }
    }

    @Test("Building refuses a string longer than 255 bytes, and accepts 255")
    func stringLength() throws {
        // "k=" and 253 bytes: 255.
        let longest = try TXTRecord(entries: [TXTEntry(key: "k", value: [UInt8](repeating: 0x41, count: 253))])
        #expect(longest.rdata.count == 256)
        #expect(longest.rdata.first == 255)
        #expect(throws: TXTRecordError.stringTooLong(length: 256)) {
            try TXTRecord(entries: [TXTEntry(key: "k", value: [UInt8](repeating: 0x41, count: 254))])
        }
        #expect(throws: TXTRecordError.stringTooLong(length: 300)) {
            try TXTRecord(strings: [[UInt8](repeating: 0x41, count: 300)])
        }
    }

    @Test("Record data whose strings overrun the end are refused with the string's offset")
    func rdataOverrunIsRefused() throws {
        #expect(throws: TXTRecordError.stringOverrun(offset: 0)) { try TXTRecord(rdata: [3, 0x61]) }
        #expect(throws: TXTRecordError.stringOverrun(offset: 2)) { try TXTRecord(rdata: [1, 0x61, 2, 0x62]) }
        let valid = try TXTRecord(rdata: [1, 0x61, 0, 2, 0x62, 0x63])
        #expect(valid.strings.map(Array.init) == [bytes("a"), [], bytes("bc")])
    }

    @Test("A TXT record goes through a message byte for byte")
    func wireRoundTrip() throws {
        let record = try TXTRecord(rdata: rdata(["txtvers=1", "PATH=/x", "PATH=/y", "=odd", "flag"]))
        let message = DNSMessage(
            flags: .authoritativeResponse,
            answers: [ResourceRecord(name: "Box._http._tcp.local", ttl: 4500, data: .txt(record))])
        let parsed = try DNSMessage(parsing: message.serialized())
        #expect(parsed.answers.first?.data == .txt(record))
        guard case .txt(let back) = parsed.answers.first?.data else { return }
        #expect(back.rdata == record.rdata)
        #expect(back["path"] == .some(bytes("/x")))
    }

    @Test("The description shows each string quoted, with unprintable bytes in hex")
    func description() throws {
        let record = try TXTRecord(strings: [bytes("a=1"), [0x62, 0x3D, 0x00, 0xFF], bytes(#"c\d"#)])
        #expect(record.description == #""a=1" "b=\x00\xff" "c\\d""#)
    }
}
