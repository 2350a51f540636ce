import Foundation
import Testing

extension HeraldOnTestLANs {
    /// The administrator's service files (services.d), as Avahi on another host sees them.
    @Suite("heraldd publishing services.d", .serialized)
    struct StaticServiceTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// The repository's example service files.
        static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("services.d")

        @Test(
            "the shipped Avahi and systemd service files, from two directories, appear in avahi-browse, and SIGHUP adds, changes and withdraws them"
        )
        func servicesDirectory() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, observer) = (lan.hosts[0], lan.hosts[1])
            try observer.startAvahi()
            let directory = server.directory + "/services.d"
            // A second directory, as /etc/avahi/services is where Herald takes Avahi's place.
            let avahiDirectory = server.directory + "/avahi-services"
            for path in [directory, avahiDirectory] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            try FileManager.default.copyItem(
                atPath: Self.examples.appendingPathComponent("ssh.service").path,
                toPath: avahiDirectory + "/ssh.service")
            try FileManager.default.copyItem(
                atPath: Self.examples.appendingPathComponent("http.dnssd").path, toPath: directory + "/http.dnssd")
            // A broken file is reported and skipped; the others are published all the same.
            try "<service-group><name>Broken</name><service><type>_broken._tcp</type></service>"
                .write(toFile: directory + "/broken.service", atomically: true, encoding: .utf8)
            // So is a service whose TXT record (40 entries of 250 bytes) cannot go out in one message.
            let hugeTXT = (0..<40).map { "k\($0 + 10)=" + String(repeating: "v", count: 246) }.joined(separator: " ")
            try "[Service]\nName=Too Big\nType=_htoobig._tcp\nPort=80\nTxtText=\(hugeTXT)\n"
                .write(toFile: directory + "/too-big.dnssd", atomically: true, encoding: .utf8)

            let daemon = try server.startHeraldd(
                hostName: "files", arguments: ["--services-dir", directory, "--services-dir", avahiDirectory])
            let ssh = try observer.waitForAvahiBrowse("_ssh._tcp", timeout: 15) { entries in
                entries.contains { $0.event == .resolved && $0.name == "files" }
            }
            #expect(ssh.contains { $0.event == .resolved && $0.name == "files" && $0.port == 22 }, "\(ssh)")
            let web = try observer.waitForAvahiBrowse("_http._tcp", timeout: 15) { entries in
                entries.contains { $0.event == .resolved && $0.name == "files web" }
            }
            #expect(
                web.contains {
                    $0.event == .resolved && $0.name == "files web" && $0.port == 80 && $0.txt == ["path=/"]
                }, "\(web)")
            #expect(daemon.log.contains("broken.service"), "the broken file was not reported:\n\(daemon.log)")
            #expect(
                daemon.log.contains("\"Too Big\" _htoobig._tcp.local.: its TXT record of 10040 bytes cannot go out"),
                "the oversized TXT record was not reported:\n\(daemon.log)")
            #expect(!daemon.log.contains("publishing \"Too Big\""), "\(daemon.log)")

            // SIGHUP: one file added, one changed (TXT), one removed.
            try "[Service]\nName=Added Later\nType=_hadded._tcp\nPort=4321\n"
                .write(toFile: directory + "/added.dnssd", atomically: true, encoding: .utf8)
            try "[Service]\nName=%H web\nType=_http._tcp\nPort=80\nTxtText=path=/changed\n"
                .write(toFile: directory + "/http.dnssd", atomically: true, encoding: .utf8)
            try FileManager.default.removeItem(atPath: avahiDirectory + "/ssh.service")
            daemon.process.send(SIGHUP)

            let added = try observer.waitForAvahiBrowse("_hadded._tcp", timeout: 15) { entries in
                entries.contains { $0.event == .resolved && $0.name == "Added Later" && $0.port == 4321 }
            }
            #expect(!added.isEmpty)
            _ = try observer.waitForAvahiBrowse("_http._tcp", timeout: 15) { entries in
                entries.contains { $0.event == .resolved && $0.name == "files web" && $0.txt == ["path=/changed"] }
            }
            _ = try observer.waitForAvahiBrowse("_ssh._tcp", resolve: false, timeout: 10) { entries in
                !entries.contains { $0.name == "files" }
            }
            #expect(daemon.process.isRunning, "\(daemon.log)")
        }

        /// Writes `count` .dnssd files, the nth holding `contents(n)`, into a services.d of `server`; returns its path.
        static func writeServiceFiles(_ count: Int, on server: TestLAN.Host, _ contents: (Int) -> String) throws
            -> String
        {
            let directory = server.directory + "/services.d"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for n in 1...count {
                try contents(n).write(toFile: directory + "/service-\(n).dnssd", atomically: true, encoding: .utf8)
            }
            return directory
        }

        @Test(
            "300 services from services.d probe in a few packets, say goodbye in a few when heraldd stops, and Avahi loses every one"
        )
        func manyServicesShareTheirPackets() throws {
            let lan = try TestLAN(hosts: 3)
            defer { lan.shutdown() }
            let (server, observer, listener) = (lan.hosts[0], lan.hosts[1], lan.hosts[2])
            try observer.startAvahi()
            let counter = try listener.countPackets(from: server.ipv4)
            let types = (0..<3).map { "_hburst\($0)._tcp" }
            let directory = try Self.writeServiceFiles(300, on: server) { n in
                "[Service]\nName=Burst \(n)\nType=\(types[n % 3])\nPort=\(5000 + n)\nTxtText=n=\(n)\n"
            }
            let daemon = try server.startHeraldd(hostName: "burst", arguments: ["--services-dir", directory])
            for type in types {
                _ = try observer.waitForAvahiBrowse(type, resolve: false, timeout: 30) { entries in
                    Set(entries.filter { $0.event == .added }.map(\.name)).count == 100
                }
            }
            let packets = {
                counter.jsonLines.map { line in
                    (
                        kind: line["kind"] as? String ?? "", questions: line["questions"] as? Int ?? 0,
                        goodbyes: line["goodbyes"] as? Int ?? 0, size: line["size"] as? Int ?? 0
                    )
                }
            }
            // Each of the 300 names (and the host's) was asked in three probe rounds: one probe per service would be
            // 900 packets; together they fit in a few per round, each within an Ethernet frame (RFC 6762 §17).
            let probes = packets().filter { $0.kind == "probe" }
            #expect(probes.map(\.questions).reduce(0, +) >= 900, "\(probes)")
            #expect(probes.count <= 60, "\(probes.count) probes")

            let seenBeforeStop = packets().count
            #expect(daemon.stop() == 0, "\(daemon.log)")
            for type in types {
                _ = try observer.waitForAvahiBrowse(type, resolve: false, timeout: 10) { entries in
                    !entries.contains { $0.event == .added }
                }
            }
            // SRV, TXT, PTR and NSEC of each service with TTL 0 (1,200 records): a few dozen packets, not 300.
            let goodbyes = packets().dropFirst(seenBeforeStop).filter { $0.goodbyes > 0 }
            #expect(goodbyes.map(\.goodbyes).reduce(0, +) >= 900, "\(goodbyes)")
            #expect(goodbyes.count <= 40, "\(goodbyes.count) packets of goodbyes")
            // No datagram was larger than an Ethernet frame: none had to be fragmented.
            #expect(packets().allSatisfy { $0.size <= 1472 }, "\(packets().map(\.size).max() ?? 0) bytes")
        }

        @Test("a service named after the host (%h, %H) follows the host name when a conflict changes it, as Avahi's do")
        func hostNamedServicesFollowARename() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, observer) = (lan.hosts[0], lan.hosts[1])
            // Avahi already holds the host name heraldd is configured with.
            try observer.startAvahi(hostName: "samename")
            let directory = server.directory + "/services.d"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try """
            <service-group><name replace-wildcards="yes">%h files</name>
            <service><type>_hrename._tcp</type><port>4040</port></service></service-group>
            """.write(toFile: directory + "/files.service", atomically: true, encoding: .utf8)
            try "[Service]\nName=%H notes\nType=_hrename._tcp\nPort=4041\n"
                .write(toFile: directory + "/notes.dnssd", atomically: true, encoding: .utf8)
            let daemon = try server.startHeraldd(hostName: "samename", arguments: ["--services-dir", directory])
            let renamed = waitUntil(timeout: 15) { daemon.log.contains("now publishing as samename-2.local.") }
            #expect(renamed.held, "\(daemon.log)")
            let entries = try observer.waitForAvahiBrowse("_hrename._tcp", timeout: 20) { entries in
                let resolved = Set(entries.filter { $0.event == .resolved }.map(\.name))
                return resolved.contains("samename-2 files") && resolved.contains("samename-2 notes")
            }
            // The names under the host name it lost are gone (their goodbyes were sent), and the services point at the
            // host name it now has.
            let current = try observer.waitForAvahiBrowse("_hrename._tcp", resolve: false, timeout: 10) { entries in
                !entries.contains { $0.name == "samename files" || $0.name == "samename notes" }
            }
            #expect(current.allSatisfy { $0.name.hasPrefix("samename-2 ") }, "\(current)")
            #expect(
                entries.filter { $0.event == .resolved && $0.name.hasPrefix("samename-2 ") }
                    .allSatisfy { $0.hostName == "samename-2.local" }, "\(entries)")
        }

        @Test("heraldd packs its packets to the interface's MTU, read at start and again when it changes")
        func packetsFitTheInterfaceMTU() throws {
            let lan = try TestLAN(hosts: 3)
            defer { lan.shutdown() }
            let (server, observer, listener) = (lan.hosts[0], lan.hosts[1], lan.hosts[2])
            // A tunnel-sized link: 1280 bytes, so 1252 of DNS over IPv4.
            try server.check(["ip", "link", "set", "dev", server.interface, "mtu", "1280"])
            try observer.startAvahi()
            let counter = try listener.countPackets(from: server.ipv4)
            let note = String(repeating: "m", count: 150)
            let directory = try Self.writeServiceFiles(120, on: server) { n in
                "[Service]\nName=Sized \(n)\nType=_hmtu._tcp\nPort=\(5000 + n)\nTxtText=note=\(note)\n"
            }
            let daemon = try server.startHeraldd(hostName: "sized", arguments: ["--services-dir", directory])
            _ = try observer.waitForAvahiBrowse("_hmtu._tcp", resolve: false, timeout: 30) { entries in
                Set(entries.filter { $0.event == .added }.map(\.name)).count == 120
            }
            let sizes = { counter.jsonLines.map { $0["size"] as? Int ?? 0 } }
            // The probes of 120 services (about 27 KB a round) filled packets up to the MTU, and none went past it.
            #expect(sizes().allSatisfy { $0 <= 1280 - 28 }, "\(sizes().max() ?? 0) bytes")
            #expect(sizes().contains { $0 > 1100 }, "\(sizes().max() ?? 0) bytes")
            func interfaceMTU() throws -> Int? {
                let status = HeraldJSON.objects(try daemon.control(["status", "--json"]).stdout).first ?? [:]
                return (status["interfaces"] as? [[String: Any]])?.first?["mtu"] as? Int
            }
            #expect(try interfaceMTU() == 1280)

            // Raised to 1400 while heraldd runs: the goodbyes when it stops use the room.
            try server.check(["ip", "link", "set", "dev", server.interface, "mtu", "1400"])
            let noticed = try waitUntil(timeout: 10) { try interfaceMTU() == 1400 }
            #expect(noticed.held, "\(daemon.log)")
            #expect(daemon.log.contains("MTU of \(server.interface) (ipv4) changed from 1280 to 1400"), "\(daemon.log)")
            let seenBeforeStop = sizes().count
            #expect(daemon.stop() == 0, "\(daemon.log)")
            _ = try observer.waitForAvahiBrowse("_hmtu._tcp", resolve: false, timeout: 10) { entries in
                !entries.contains { $0.event == .added }
            }
            let goodbyes = sizes().dropFirst(seenBeforeStop)
            #expect(goodbyes.allSatisfy { $0 <= 1400 - 28 }, "\(Array(goodbyes))")
            #expect(goodbyes.contains { $0 > 1280 - 28 }, "\(Array(goodbyes))")
        }

        @Test(
            "a .dnssd file's Priority= and Weight= are in the SRV record and each TxtText=/TxtData= line is a TXT record on the wire"
        )
        func dnssdPriorityWeightAndTXTRecords() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, observer) = (lan.hosts[0], lan.hosts[1])
            let directory = server.directory + "/services.d"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try """
            [Service]
            Name=weighted
            Type=_hweight._tcp
            Port=8080
            Priority=3
            Weight=700
            TxtText=path=/ v=1
            TxtData=blob=AAEC
            """.write(toFile: directory + "/weighted.dnssd", atomically: true, encoding: .utf8)
            let daemon = try server.startHeraldd(hostName: "weights", arguments: ["--services-dir", directory])
            let instance = "weighted._hweight._tcp.local"
            // SRV (33): priority 3, weight 700 (0x02bc), port 8080 (0x1f90), then the target.
            var srv: [LegacyReply.Record] = []
            let srvSeen = try waitUntil(timeout: 15) {
                srv = try observer.legacyQuery(instance, type: 33, timeout: 1).flatMap(\.answers).filter {
                    $0.type == 33
                }
                return !srv.isEmpty
            }
            #expect(srvSeen.held, "no SRV answer:\n\(daemon.log)")
            #expect(srv.allSatisfy { $0.value.hasPrefix("000302bc1f90") }, "\(srv)")
            // TXT (16): both records of the set, in one answer.
            let txt = try observer.legacyQuery(instance, type: 16, timeout: 1).flatMap(\.answers).filter {
                $0.type == 16
            }
            let values = Set(txt.map(\.value))
            let first = hex(txtRData([Array("path=/".utf8), Array("v=1".utf8)]))
            let second = hex(txtRData([Array("blob=".utf8) + [0, 1, 2]]))
            #expect(values == [first, second], "\(txt)")
            #expect(daemon.process.isRunning, "\(daemon.log)")
        }
    }
}
