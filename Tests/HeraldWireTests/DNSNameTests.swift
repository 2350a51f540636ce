import HeraldWire
import Testing

/// Domain names: presentation form with escapes (RFC 1035 §5.1, RFC 6763 §4.3), length limits (RFC 1035 §2.3.4),
/// ASCII-only case-insensitive comparison (RFC 6762 §16) and canonical order (RFC 4034 §6.1).
@Suite("DNS names")
struct DNSNameTests {
    /// Parses presentation form. (`DNSName("literal")` would be the trapping string-literal initializer,
    /// not the throwing parser: Swift turns `T("literal")` into a literal of `T`.)
    private func parse(_ text: String) throws(DNSNameError) -> DNSName { try DNSName(text) }
    private func labels(_ text: String) throws -> [[UInt8]] { try parse(text).labels }
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Presentation form

    @Test("Escaped dots and backslashes stay inside their label, both ways")
    func dotAndBackslashEscapes() throws {
        let name = try parse(#"My\.Printer\\Office._ipp._tcp.local"#)
        #expect(name.labels == [bytes(#"My.Printer\Office"#), bytes("_ipp"), bytes("_tcp"), bytes("local")])
        #expect(name.description == #"My\.Printer\\Office._ipp._tcp.local."#)
    }

    @Test("Decimal escapes \\DDD read any byte, and control bytes are written as \\DDD")
    func decimalEscapes() throws {
        #expect(try labels(#"\065\098c.local"#) == [bytes("Abc"), bytes("local")])
        #expect(try labels(#"\000\255\046"#) == [[0, 255, UInt8(ascii: ".")]])
        let control = try DNSName(labels: [[0x01, 0x41, 0x7F, 0x0A]])
        #expect(control.description == #"\001A\127\010."#)
    }

    @Test("Spaces and UTF-8 are kept as they are, both ways")
    func spacesAndUTF8() throws {
        let name = try parse("Café Tür 🖨 (2)._http._tcp.local.")
        #expect(name.labels.first == bytes("Café Tür 🖨 (2)"))
        #expect(name.description == "Café Tür 🖨 (2)._http._tcp.local.")
    }

    @Test("The DNS-SD C API form escapes spaces as \\032 as well, and parses back to the same name")
    func dnssdFullName() throws {
        let name = try DNSName(labels: [
            Array("Game One. Café\\".utf8), Array("_x".utf8), Array("_tcp".utf8), Array("local".utf8),
        ])
        #expect(name.dnssdFullName == #"Game\032One\.\032Café\\._x._tcp.local."#)
        #expect(name.description == #"Game One\. Café\\._x._tcp.local."#)
        #expect(try DNSName(name.dnssdFullName).isIdentical(to: name))
        #expect(DNSName.root.dnssdFullName == ".")
        #expect(DNSName.readable(dnssdFullName: name.dnssdFullName) == name.description)
        #expect(DNSName.readable(dnssdFullName: "not..a name") == "not..a name")
    }

    @Test("Bytes that are not valid UTF-8 are written as \\DDD")
    func invalidUTF8IsEscaped() throws {
        let name = try DNSName(labels: [[0xFF, 0x61], [0xC3], bytes("local")])
        #expect(name.description == #"\255a.\195.local."#)
        #expect(try DNSName(name.description).isIdentical(to: name))
    }

    @Test("The trailing dot is optional, and \".\" and \"\" are the root")
    func trailingDotAndRoot() throws {
        #expect(try parse("host.local").isIdentical(to: parse("host.local.")))
        #expect(try parse("host.local").description == "host.local.")
        #expect(try parse(".").isRoot)
        #expect(try parse("").isRoot)
        #expect(DNSName.root.description == ".")
        #expect(DNSName.root.wireLength == 1)
        #expect(DNSName.root.labels.isEmpty)
    }

    @Test("Invalid escapes are refused", arguments: [#"\25"#, #"a\2"#, #"\256.local"#, #"\999"#, #"\2a5"#, #"local\"#])
    func invalidEscapes(text: String) {
        #expect(throws: DNSNameError.self) { try DNSName(text) }
        do {
            _ = try DNSName(text)
        } catch {
            guard case .invalidEscape = error else {
                Issue.record("\(text): expected invalidEscape, got \(error)")
                return
            }
        }
    }

    @Test("The offending escape is named in the error")
    func invalidEscapeText() {
        #expect(throws: DNSNameError.invalidEscape(#"\25"#)) { try parse(#"\25"#) }
        #expect(throws: DNSNameError.invalidEscape(#"\256"#)) { try parse(#"\256.local"#) }
        #expect(throws: DNSNameError.invalidEscape(#"\"#)) { try parse(#"local\"#) }
    }

    @Test("Empty labels are refused", arguments: ["a..local", ".local", "..", "local.."])
    func emptyLabels(text: String) {
        #expect(throws: DNSNameError.emptyLabel) { try DNSName(text) }
    }

    @Test("Any label of arbitrary bytes survives presentation form and back")
    func presentationRoundTripOfArbitraryBytes() throws {
        var random = SplitMix64(seed: 1035)
        for _ in 0..<500 {
            let labelCount = Int.random(in: 1...4, using: &random)
            let labels = (0..<labelCount).map { _ in
                (0..<Int.random(in: 1...20, using: &random)).map { _ in
                    // Mostly bytes that need care: dots, backslashes, digits, controls, high bytes.
                    Bool.random(using: &random)
                        ? [UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "1"), 0, 0x7F, 0xC3, 0xA9, 0x20]
                            .randomElement(using: &random)!
                        : UInt8.random(in: 0...255, using: &random)
                }
            }
            let name = try DNSName(labels: labels)
            let text = name.description
            let reparsed = try DNSName(text)
            #expect(reparsed.isIdentical(to: name), "\(labels) printed as \(text)")
        }
    }

    @Test("Every name in the realistic corpus prints and parses back identical, with the same hash")
    func corpusNamesRoundTripThroughText() throws {
        var count = 0
        for bytes in try Corpus.realistic.get().prefix(600) {
            for name in try DNSMessage(parsing: bytes).allNames {
                let reparsed = try DNSName(name.description)
                #expect(reparsed.isIdentical(to: name), "\(name)")
                #expect(reparsed.hashValue == name.hashValue)
                #expect(reparsed.lowercased.hashValue == name.hashValue)
                count += 1
            }
        }
        #expect(count > 5000)
    }

    // MARK: Lengths

    @Test("A label of 63 bytes is accepted, 64 is refused")
    func labelLength() throws {
        let longest = String(repeating: "a", count: 63)
        #expect(try parse("\(longest).local").labels[0].count == 63)
        #expect(throws: DNSNameError.labelTooLong(length: 64)) { try parse("\(longest)b.local") }
        // Escapes count as the byte they stand for.
        #expect(try DNSName(String(repeating: #"\."#, count: 63)).labels[0].count == 63)
        #expect(throws: DNSNameError.labelTooLong(length: 64)) { try DNSName(String(repeating: #"\046"#, count: 64)) }
        #expect(throws: DNSNameError.labelTooLong(length: 64)) {
            try DNSName(labels: [[UInt8](repeating: 0x61, count: 64)])
        }
    }

    @Test("A name of 255 bytes on the wire is accepted, 256 is refused")
    func nameLength() throws {
        let label63 = String(repeating: "x", count: 63)
        // 3 × (1 + 63) + (1 + 61) + 1 root byte = 255.
        let longest = try parse("\(label63).\(label63).\(label63).\(String(repeating: "y", count: 61))")
        #expect(longest.wireLength == 255)
        #expect(throws: DNSNameError.nameTooLong(length: 256)) {
            try parse("\(label63).\(label63).\(label63).\(String(repeating: "y", count: 62))")
        }
        #expect(throws: DNSNameError.nameTooLong(length: 257)) {
            try parse("\(label63).\(label63).\(label63).\(label63)")
        }
        // Many short labels: 127 × 2 bytes + 1 = 255; one more is too long.
        #expect(try DNSName(Array(repeating: "a", count: 127).joined(separator: ".")).wireLength == 255)
        #expect(throws: DNSNameError.nameTooLong(length: 257)) {
            try DNSName(Array(repeating: "a", count: 128).joined(separator: "."))
        }
    }

    // MARK: Comparison

    @Test("Names compare and hash equal regardless of ASCII case, and keep their own case")
    func caseInsensitiveEqualityAndHash() throws {
        let mixed = try parse("MyHost.LOCAL")
        let lower = try parse("myhost.local.")
        #expect(mixed == lower)
        #expect(mixed.hashValue == lower.hashValue)
        #expect(Set([mixed, lower]).count == 1)
        #expect(!mixed.isIdentical(to: lower))
        #expect(mixed.description == "MyHost.LOCAL.")
        #expect(mixed.lowercased.isIdentical(to: lower))
        // Longer than the 8-byte hashing stride, with case differences in every part.
        let long = try parse("ABCDEFGHIJKLMNOPQRSTUVWXYZ._Service._TCP.Local")
        #expect(long.hashValue == long.lowercased.hashValue)
    }

    @Test("Only ASCII letters fold: other bytes must match exactly")
    func onlyASCIIFolds() throws {
        #expect(try parse("É.local") != parse("é.local"))
        #expect(try parse("Ä") != parse("ä"))
        // '[' (0x5B) and '{' (0x7B), '@' (0x40) and '`' (0x60) differ by the case bit but are not letters.
        #expect(try parse("a[b") != parse("a{b"))
        #expect(try parse("@") != parse("`"))
        #expect(try parse("host.local") != parse("host.local.x"))
        #expect(try parse("host") != parse("hos"))
    }

    @Test("Every pair of byte values compares as RFC 6762 §16 says, in the eight-byte stride and in the tail")
    func everyBytePairFolds() throws {
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        for x in UInt8.min...UInt8.max {
            for y in UInt8.min...UInt8.max {
                let equal = x == y || (isLetter(x) && x ^ 0x20 == y)
                // Position 3 is read eight bytes at a time (the label's length byte comes first); position 10 in the tail.
                for position in [3, 10] {
                    var left = Array("abcdefghijk".utf8)
                    var right = left
                    left[position] = x
                    right[position] = y
                    let a = try DNSName(labels: [left])
                    let b = try DNSName(labels: [right])
                    #expect((a == b) == equal, "bytes \(x) and \(y) at \(position)")
                    if equal { #expect(a.hashValue == b.hashValue) }
                    #expect(a.isIdentical(to: b) == (x == y))
                }
            }
        }
    }

    @Test("hasSuffix matches whole labels, case-insensitively")
    func hasSuffix() throws {
        let name = try parse("My Printer._ipp._TCP.local")
        #expect(name.hasSuffix("local"))
        #expect(name.hasSuffix("_tcp.LOCAL"))
        #expect(name.hasSuffix(name))
        #expect(name.hasSuffix(.root))
        #expect(!name.hasSuffix("ocal"))
        #expect(!name.hasSuffix("_udp.local"))
        #expect(!name.hasSuffix("x.My Printer._ipp._tcp.local"))
        #expect(try !parse("foo.xlocal").hasSuffix("local"))
        // The last bytes match "\001b" but do not start on a label boundary.
        let tricky = try DNSName(labels: [[UInt8(ascii: "x"), 1, UInt8(ascii: "b")]])
        #expect(!tricky.hasSuffix("b"))
        #expect(!DNSName.root.hasSuffix("local"))
    }

    // MARK: Structure

    @Test("Labels, parent, first label and suffixes")
    func structure() throws {
        let name = try parse("a.B.local")
        #expect(name.labelCount == 3)
        #expect(name.labels == [bytes("a"), bytes("B"), bytes("local")])
        #expect(name.labelOffsets == [0, 2, 4])
        #expect(name.wire == [1, 0x61, 1, 0x42, 5] + bytes("local"))
        #expect(name.wireLength == 11)
        #expect(name.firstLabel == bytes("a"))
        #expect(name.parent?.isIdentical(to: "B.local") == true)
        #expect(name.parent?.parent?.isIdentical(to: "local") == true)
        #expect(name.parent?.parent?.parent?.isRoot == true)
        #expect(DNSName.root.parent == nil)
        #expect(DNSName.root.firstLabel == nil)
        #expect(name.suffix(labelCount: 2).isIdentical(to: "B.local"))
        #expect(name.suffix(labelCount: 0).isRoot)
        #expect(name.suffix(labelCount: 5).isIdentical(to: name))
    }

    @Test("Appending and prepending build longer names, within the limits")
    func appendingAndPrepending() throws {
        let service = try parse("_http._tcp.local")
        #expect(try parse("a.b").appending("local").isIdentical(to: "a.b.local"))
        #expect(try DNSName.root.appending(service).isIdentical(to: service))
        #expect(try service.appending(.root).isIdentical(to: service))

        let instance = try service.prepending(label: "Living Room.TV")
        #expect(instance.labelCount == 4)
        #expect(instance.firstLabel == bytes("Living Room.TV"))
        #expect(instance.description == #"Living Room\.TV._http._tcp.local."#)
        #expect(try DNSName.root.prepending(label: [0x61]).isIdentical(to: "a"))

        #expect(throws: DNSNameError.emptyLabel) { try service.prepending(label: "") }
        #expect(throws: DNSNameError.labelTooLong(length: 64)) {
            try service.prepending(label: String(repeating: "z", count: 64))
        }
        let label63 = String(repeating: "x", count: 63)
        let long = try parse("\(label63).\(label63).\(label63)")  // 193 bytes
        #expect(try long.prepending(label: String(repeating: "y", count: 61)).wireLength == 255)
        #expect(throws: DNSNameError.nameTooLong(length: 256)) {
            try long.prepending(label: String(repeating: "y", count: 62))
        }
        #expect(throws: DNSNameError.nameTooLong(length: 257)) { try long.appending(DNSName(label63)) }
        #expect(try DNSName(labelStrings: ["a.b", "local"]).description == #"a\.b.local."#)
    }

    @Test("Canonical order compares labels right to left, lowered, as RFC 4034 §6.1 lists them")
    func canonicalOrdering() throws {
        let ordered: [DNSName] = try [
            "example", "a.example", "yljkjljk.a.example", "Z.a.example", "zABC.a.EXAMPLE", "z.example",
            #"\001.z.example"#, "*.z.example", #"\200.z.example"#,
        ].map { try DNSName($0) }
        var random = SplitMix64(seed: 4034)
        for _ in 0..<10 {
            let sorted = ordered.shuffled(using: &random).sorted()
            #expect(zip(sorted, ordered).allSatisfy { $0.isIdentical(to: $1) }, "\(sorted)")
        }
        #expect(DNSName.root < "example")
        #expect(!(try parse("A.example") < parse("a.EXAMPLE")))
        #expect(!(try parse("a.EXAMPLE") < parse("A.example")))
    }
}

@Suite("DNSName wire order")
struct DNSNameWireOrderTests {
    @Test("A total order that ignores ASCII case and puts a prefix first")
    func order() throws {
        let a = try DNSName("a.local")
        let upper = try DNSName("A.LOCAL")
        let b = try DNSName("b.local")
        let longer = try DNSName("ab.local")
        #expect(a.precedesInWireOrder(b) && !b.precedesInWireOrder(a))
        #expect(!a.precedesInWireOrder(upper) && !upper.precedesInWireOrder(a))
        // Wire bytes: the length byte comes first, so "b" (1 byte) precedes "ab" (2 bytes).
        #expect(b.precedesInWireOrder(longer))
        #expect(DNSName.root.precedesInWireOrder(a) && !a.precedesInWireOrder(.root))
        let names = try ["x.local", "B.local", "a.local", "b.LOCAL"].map { try DNSName($0) }
        let sorted = names.sorted { $0.precedesInWireOrder($1) }
        #expect(sorted.map { $0.description.lowercased() } == ["a.local.", "b.local.", "b.local.", "x.local."])
    }
}
