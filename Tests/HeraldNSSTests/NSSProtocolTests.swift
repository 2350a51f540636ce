import HeraldEngine
import HeraldNSS
import HeraldWire
import Testing

@Suite("The libnss-mdns protocol")
struct NSSProtocolTests {
    static func parse(_ text: String) throws(NSSRequestError) -> NSSRequest {
        try NSSRequest(line: Array(text.utf8))
    }

    @Test("the requests libnss-mdns sends are understood")
    func requests() throws {
        #expect(try Self.parse("RESOLVE-HOSTNAME-IPV4 printer.local") == .resolveHostName("printer.local.", .ipv4))
        #expect(try Self.parse("RESOLVE-HOSTNAME-IPV6 printer.local.") == .resolveHostName("printer.local.", .ipv6))
        #expect(try Self.parse("RESOLVE-HOSTNAME Printer.Local\r") == .resolveHostName("printer.local.", .any))
        #expect(try Self.parse("RESOLVE-ADDRESS 10.0.0.7") == .resolveAddress(.v4(IPv4Address(10, 0, 0, 7))))
        #expect(try Self.parse("RESOLVE-ADDRESS fe80::1") == .resolveAddress(IPAddress("fe80::1")!))
        #expect(try Self.parse("  HELP ") == .help)
        #expect(try Self.parse("BROWSE-DNS-SERVERS-IPV4") == .browseDNSServers)
    }

    @Test("malformed lines are refused with the reason and the reply libnss-mdns reads as a failure")
    func malformed() {
        let cases: [(String, NSSRequestError, Int)] = [
            ("", .empty, -21),
            ("   ", .empty, -21),
            ("resolve-hostname x.local", .unknownCommand("resolve-hostname"), -21),
            ("RESOLVE-HOSTNAME", .wrongArgumentCount(command: "RESOLVE-HOSTNAME", expected: 1), -21),
            ("RESOLVE-HOSTNAME a.local b.local", .wrongArgumentCount(command: "RESOLVE-HOSTNAME", expected: 1), -21),
            ("HELP me", .wrongArgumentCount(command: "HELP", expected: 0), -21),
            ("RESOLVE-ADDRESS 300.1.2.3", .badAddress("300.1.2.3"), -14),
            ("RESOLVE-HOSTNAME-IPV4 a..local", .badHostName("a..local"), -3),
            (
                "RESOLVE-HOSTNAME-IPV4 " + String(repeating: "a", count: 64) + ".local",
                .badHostName(String(repeating: "a", count: 64) + ".local"), -3
            ),
            ("RESOLVE-HOSTNAME-IPV4 .", .badHostName("."), -3),
        ]
        for (line, expected, code) in cases {
            #expect(throws: expected, "\(line)") { try Self.parse(line) }
            #expect(expected.reply.text.hasPrefix("\(code) ") && !expected.reply.isFound)
        }
        #expect(throws: NSSRequestError.notText) { try NSSRequest(line: [0x52, 0x00, 0x41]) }
        #expect(throws: NSSRequestError.notText) { try NSSRequest(line: [0x52, 0xFF, 0x41]) }
        let long = "RESOLVE-HOSTNAME " + String(repeating: "a.", count: 600) + "local"
        #expect(throws: NSSRequestError.lineTooLong) { try Self.parse(long) }
    }

    @Test("replies have the fields libnss-mdns reads: interface, protocol, name and address")
    func replies() {
        let v4 = NSSReply.hostAddress(
            interfaceIndex: 3, protocol: .ipv4, name: "printer.local.", address: IPAddress("10.0.0.7")!)
        #expect(v4.text == "+ 3 0 printer.local 10.0.0.7\n")
        let v6 = NSSReply.hostAddress(
            interfaceIndex: 4, protocol: .ipv6, name: "printer.local.", address: IPAddress("fe80::1")!)
        #expect(v6.text == "+ 4 1 printer.local fe80::1\n")
        let reverse = NSSReply.addressName(
            interfaceIndex: 2, protocol: .ipv4, name: try! DNSName(labelStrings: ["my box", "local"]))
        #expect(reverse.text == "+ 2 0 my\\032box.local\n", "a blank in a name must not split the field")
        #expect(NSSReply.failure(.timeout).text == "-15 Timeout reached\n")
        #expect(!NSSReply.failure(.timeout).isFound && v4.isFound)
        #expect(NSSReply.help.text.split(separator: "\n").allSatisfy { $0.hasPrefix("+") })
    }

    @Test("a line is complete at its newline, whatever the pieces it arrives in, and never grows past the limit")
    func lineReader() {
        var reader = NSSLineReader(limit: 30)
        #expect(reader.feed(Array("RESOLVE-".utf8)) == .incomplete)
        #expect(reader.feed(Array("ADDRESS 1.2.3.4\nignored".utf8)) == .line(Array("RESOLVE-ADDRESS 1.2.3.4".utf8)))
        var flood = NSSLineReader(limit: 20)
        #expect(flood.feed([UInt8](repeating: 0x41, count: 15)) == .incomplete)
        #expect(flood.feed([UInt8](repeating: 0x41, count: 6)) == .tooLong)
        var unterminated = NSSLineReader()
        #expect(unterminated.feed(Array("HELP".utf8)) == .incomplete)
        #expect(unterminated.finish() == Array("HELP".utf8))
        #expect(unterminated.finish() == nil)
    }
}

@Suite("When an NSS lookup answers")
struct NSSLookupProgressTests {
    let timing = NSSTiming()

    func found(_ text: String, interface: Int = 2) -> NSSFoundAddress {
        let address = IPAddress(text)!
        return NSSFoundAddress(address: address, interfaceIndex: interface, linkFamily: address.family)
    }

    @Test("a cached address answers at once; a name nobody answers is a miss after the miss time, not before")
    func missAndHit() {
        var lookup = NSSHostLookupProgress(startedAt: 10_000)
        #expect(lookup.outcome(for: .ipv4, at: 10_000, timing: timing) == .waitUntil(10_000 + timing.missAfter))
        #expect(lookup.outcome(for: .ipv4, at: 10_999, timing: timing) == .waitUntil(11_000))
        #expect(lookup.outcome(for: .ipv4, at: 11_000, timing: timing) == .notFound)
        lookup.add(found("10.0.0.7"), at: 11_500)
        #expect(lookup.outcome(for: .ipv4, at: 11_500, timing: timing) == .answer(found("10.0.0.7")))
    }

    @Test("once one family answered, the other family waits only a short while")
    func otherFamily() {
        var lookup = NSSHostLookupProgress(startedAt: 0)
        lookup.add(found("10.0.0.7"), at: 80)
        #expect(lookup.outcome(for: .ipv4, at: 80, timing: timing) == .answer(found("10.0.0.7")))
        #expect(lookup.outcome(for: .ipv6, at: 81, timing: timing) == .waitUntil(80 + timing.otherFamilyAfter))
        #expect(lookup.outcome(for: .ipv6, at: 80 + timing.otherFamilyAfter, timing: timing) == .notFound)
        lookup.add(found("fd00::7"), at: 120)
        #expect(lookup.outcome(for: .ipv6, at: 120, timing: timing) == .answer(found("fd00::7")))
    }

    @Test(
        "a family the host says it has none of (its NSEC) is a miss at once; while another link still says so it stays one; an address found still answers"
    )
    func deniedFamily() {
        var lookup = NSSHostLookupProgress(startedAt: 0)
        let (v4Link, v6Link) = (LinkID(interfaceIndex: 2, family: .ipv4), LinkID(interfaceIndex: 2, family: .ipv6))
        lookup.add(found("10.0.0.7"), at: 40)
        lookup.note(.ipv6, denied: true, on: v4Link)
        lookup.note(.ipv6, denied: true, on: v6Link)
        #expect(lookup.outcome(for: .ipv6, at: 41, timing: timing) == .denied)
        #expect(lookup.outcome(for: .ipv4, at: 41, timing: timing) == .answer(found("10.0.0.7")))
        #expect(lookup.outcome(for: .any, at: 41, timing: timing) == .answer(found("10.0.0.7")))
        lookup.note(.ipv6, denied: false, on: v4Link)
        #expect(lookup.outcome(for: .ipv6, at: 42, timing: timing) == .denied)
        lookup.note(.ipv6, denied: false, on: v6Link)
        #expect(lookup.outcome(for: .ipv6, at: 42, timing: timing) == .waitUntil(40 + timing.otherFamilyAfter))

        // With nothing found, .any is a miss at once only when both families are denied.
        var nothing = NSSHostLookupProgress(startedAt: 0)
        nothing.note(.ipv4, denied: true, on: v4Link)
        #expect(nothing.outcome(for: .any, at: 5, timing: timing) == .waitUntil(timing.missAfter))
        #expect(nothing.outcome(for: .ipv4, at: 5, timing: timing) == .denied)
        nothing.note(.ipv6, denied: true, on: v4Link)
        #expect(nothing.outcome(for: .any, at: 5, timing: timing) == .denied)
        // An address arriving later (the host gained one) answers despite an old denial.
        nothing.add(found("fd00::7"), at: 6)
        #expect(nothing.outcome(for: .ipv6, at: 6, timing: timing) == .answer(found("fd00::7")))

        // A host heard on two interfaces that denies IPv6 on one of them only may have it on the other: wait.
        var twoNetworks = NSSHostLookupProgress(startedAt: 0)
        twoNetworks.add(found("10.0.0.7", interface: 2), at: 10)
        twoNetworks.add(found("10.1.0.7", interface: 3), at: 11)
        twoNetworks.note(.ipv6, denied: true, on: v4Link)
        #expect(twoNetworks.outcome(for: .ipv6, at: 12, timing: timing) == .waitUntil(10 + timing.otherFamilyAfter))
        twoNetworks.note(.ipv6, denied: true, on: LinkID(interfaceIndex: 3, family: .ipv4))
        #expect(twoNetworks.outcome(for: .ipv6, at: 12, timing: timing) == .denied)
    }

    @Test("IPv4 is preferred for either family, and a routable IPv6 address over a link-local one")
    func preferences() {
        var lookup = NSSHostLookupProgress(startedAt: 0)
        lookup.add(found("fe80::7"), at: 10)
        #expect(lookup.outcome(for: .any, at: 10, timing: timing) == .answer(found("fe80::7")))
        lookup.add(found("fd00::7"), at: 11)
        lookup.add(found("10.0.0.7"), at: 12)
        #expect(lookup.outcome(for: .ipv6, at: 12, timing: timing) == .answer(found("fd00::7")))
        #expect(lookup.outcome(for: .any, at: 12, timing: timing) == .answer(found("10.0.0.7")))
        lookup.remove(IPAddress("10.0.0.7")!)
        #expect(lookup.outcome(for: .ipv4, at: 13, timing: timing) == .waitUntil(10 + timing.otherFamilyAfter))
    }

    @Test("a reverse lookup answers with the first name that arrives, or misses after the miss time")
    func reverse() {
        var lookup = NSSReverseLookupProgress(startedAt: 0)
        #expect(lookup.outcome(at: 500, timing: timing) == .waitUntil(timing.missAfter))
        #expect(lookup.outcome(at: timing.missAfter, timing: timing) == .notFound)
        let name = NSSFoundName(name: "printer.local.", interfaceIndex: 2, linkFamily: .ipv4)
        lookup.add(name)
        lookup.add(NSSFoundName(name: "other.local.", interfaceIndex: 2, linkFamily: .ipv4))
        #expect(lookup.outcome(at: 5000, timing: timing) == .answer(name))
    }
}
