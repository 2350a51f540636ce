import Foundation
import Testing

/// A one-shot query from an ordinary port must get a reply that reads as ordinary unicast DNS (RFC 6762 §6.7).
/// dnspython is strict: it refuses a compressed name where unicast DNS forbids compression (NSEC record data,
/// RFC 4034 §4.1.1), so one such pointer makes it reject the whole reply (issue 29).
extension HeraldOnTestLANs {
    @Suite("a strict DNS library as a legacy unicast client", .serialized)
    struct StrictLegacyClientTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// argv: SERVER NAME TYPE [NAME TYPE …]; one line per query: the name, type, rcode and every record of the
        /// reply in presentation form (sections answer, additional), or the error dnspython raised.
        static let script = #"""
            import sys
            import dns.message, dns.query, dns.rdatatype
            server = sys.argv[1]
            pairs = sys.argv[2:]
            for name, rdtype in zip(pairs[0::2], pairs[1::2]):
                query = dns.message.make_query(name, rdtype)
                try:
                    reply = dns.query.udp(query, server, port=5353, timeout=3)
                except Exception as error:
                    print("query %s %s: error %s: %s" % (name, rdtype, type(error).__name__, error), flush=True)
                    continue
                records = []
                for section, rrsets in (("answer", reply.answer), ("additional", reply.additional)):
                    for rrset in rrsets:
                        for rdata in rrset:
                            records.append("%s %s %s %s" % (section, rrset.name, dns.rdatatype.to_text(rrset.rdtype),
                                                            rdata.to_text()))
                print("query %s %s: rcode %d id-matches %s | %s" % (name, rdtype, reply.rcode(), reply.id == query.id,
                                                                  " | ".join(records)), flush=True)
            """#

        @Test(
            "dnspython's dns.query.udp to port 5353 parses Herald's replies for a service type, an instance and a name with no record of the type"
        )
        func dnspythonParsesLegacyReplies() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, client) = (lan.hosts[0], lan.hosts[1])
            let daemon = try server.startHeraldd()
            let register = try daemon.spawnHerald(["register", "Strict Target", "_hstrict._tcp", "7100", "path=/x"])
            defer { register.terminate(grace: 1) }
            try register.waitForOutput(containing: "Strict Target", in: .stdout, timeout: 15)
            let host = "\(daemon.hostName).local."
            let result = try client.run(
                [
                    "python3", "-c", Self.script, server.ipv4,
                    "_hstrict._tcp.local.", "PTR",
                    "Strict Target._hstrict._tcp.local.", "SRV",
                    "Strict Target._hstrict._tcp.local.", "A",
                    host, "TXT",
                ], timeout: 60)
            #expect(result.status == 0, "\(result)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(result)")
            #expect(!result.stdout.contains(": error "), "dnspython refused a reply:\n\(result.stdout)\n\(daemon.log)")
            func line(_ prefix: String) -> String { lines.first { $0.hasPrefix(prefix) } ?? "" }
            let ptr = line("query _hstrict._tcp.local. PTR")
            #expect(
                ptr.contains("rcode 0 id-matches True")
                    && ptr.contains("answer _hstrict._tcp.local. PTR Strict\\032Target._hstrict._tcp.local."),
                "\(ptr)")
            #expect(ptr.contains("additional Strict\\032Target._hstrict._tcp.local. SRV 0 0 7100 \(host)"), "\(ptr)")
            let srv = line("query Strict Target._hstrict._tcp.local. SRV")
            #expect(srv.contains("answer Strict\\032Target._hstrict._tcp.local. SRV 0 0 7100 \(host)"), "\(srv)")
            // The instance has no address record: the reply says so with an NSEC, whose next name is written in full.
            let negative = line("query Strict Target._hstrict._tcp.local. A")
            #expect(negative.contains("NSEC Strict\\032Target._hstrict._tcp.local."), "\(negative)")
            let noTXT = line("query \(host) TXT")
            #expect(noTXT.contains("NSEC \(host) A AAAA"), "\(noTXT)")
        }
    }
}
