import Foundation
import Testing

extension HeraldOnTestLANs {
    /// C programs compiled against Debian's dns_sd.h and linked with -ldns_sd run on Herald's library by loader
    /// path alone, against a real heraldd, with Avahi as the peer in another namespace (BRIEF §6.3).
    @Suite("libdns_sd against heraldd and Avahi", .serialized)
    struct LibDNSSDInteropTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test("dns-sd-lite browses, resolves and looks up an Avahi service; its registration with TXT and a subtype is seen by avahi-browse; query, shared connection, domains, property and record calls work")
        func cProgramsOnHerald() throws {
            let lite = try LibDNSSDPrograms.compile("Examples/dns-sd-lite/dns-sd-lite.c", named: "dns-sd-lite")
            let probe = try LibDNSSDPrograms.compile("Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
            let herald = try LibDNSSDPrograms.libraryDirectory() + "/libdns_sd.so.1"
            #expect(try LibDNSSDPrograms.loadedLibrary(of: lite) == herald)
            #expect(try LibDNSSDPrograms.loadedLibrary(of: probe) == herald)

            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            let type = "_hlib._tcp"
            let daemon = try local.startHeraldd()
            let environment = try LibDNSSDPrograms.environment(socket: daemon.socket)
            let avahi = try peer.startAvahi()
            let publisher = try peer.spawn(["avahi-publish", "-s", "--subtype", "_printer._sub.\(type)", "Avahi Lib", type, "4501",
                                            "path=/lib", "flag"])
            try publisher.waitForOutput(containing: "Established under name 'Avahi Lib'", timeout: 15)
            let peerHost = "\(avahi.hostName).local"

            // Browse: the transcript of the example finding Avahi's service.
            let browse = try local.run([lite, "-t", "4", "-B", type], environment: environment)
            print("$ LD_LIBRARY_PATH=\(environment["LD_LIBRARY_PATH"]!) DNSSD_UDS_PATH=\(daemon.socket) dns-sd-lite -t 4 -B \(type)\n\(browse.stdout)")
            #expect(browse.succeeded, "\(browse)")
            #expect(browse.stdout.split(separator: "\n").contains { $0.contains("Add") && $0.contains("\(type).") && $0.hasSuffix("Avahi Lib") },
                    "\(browse)\nheraldd:\n\(daemon.log)")
            #expect(!browse.stderr.contains("Apple Bonjour compatibility layer"), "Avahi's library was loaded: \(browse.stderr)")

            // Resolve: host, port and TXT.
            let resolve = try local.run([lite, "-t", "3", "-L", "Avahi Lib", type], environment: environment)
            print("$ dns-sd-lite -t 3 -L 'Avahi Lib' \(type)\n\(resolve.stdout)")
            #expect(resolve.stdout.contains("Avahi Lib.\(type).local. can be reached at \(peerHost).:4501"), "\(resolve)")
            #expect(resolve.stdout.contains(" path=/lib flag\n"), "\(resolve)")

            // Address lookup (DNSServiceGetAddrInfo, found at run time).
            let addresses = try local.run([lite, "-t", "3", "-G", "v4", peerHost], environment: environment)
            print("$ dns-sd-lite -t 3 -G v4 \(peerHost)\n\(addresses.stdout)")
            #expect(addresses.stdout.split(separator: "\n").contains { $0.contains(peerHost) && $0.contains(" \(peer.ipv4) ") },
                    "\(addresses)")

            // Query record: SRV of the instance (priority 0, weight 0, port 4501 = 0x1195).
            let query = try local.run([probe, "query", "Avahi Lib.\(type).local.", "33", "3"], environment: environment)
            #expect(query.stdout.contains("query return=0"), "\(query)")
            #expect(query.stdout.contains("error=0 name=Avahi Lib.\(type).local. type=33 class=1")
                    && query.stdout.contains("rdata=000000001195"), "\(query)")

            // Shared connection: browse and resolve as subordinates; cancelling one leaves the other working.
            let shared = try local.run([probe, "shared", type, "Avahi Lib", "4"], environment: environment)
            #expect(shared.stdout.contains("connection return=0") && shared.stdout.contains("subordinate-fd=-1"), "\(shared)")
            #expect(shared.stdout.contains("browse flags=") && shared.stdout.contains("error=0 name=Avahi Lib type=\(type). domain=local."), "\(shared)")
            #expect(shared.stdout.contains("resolve flags=") && shared.stdout.contains("host=\(peerHost). port=4501"), "\(shared)")
            #expect(shared.stdout.contains("browse cancelled\nbrowse-again return=0\nbrowse-again flags="), "\(shared)")

            // Domains and the daemon's version.
            let domains = try local.run([probe, "enumerate", "1"], environment: environment)
            #expect(domains.stdout.contains("domain flags=6 if=0 error=0 domain=local."), "\(domains)")
            let property = try local.run([probe, "property"], environment: environment)
            #expect(property.stdout.contains("DaemonVersion return=0 size=4 value=") && !property.stdout.contains("value=0\n"), "\(property)")
            #expect(property.stdout.contains("NoSuchProperty return=-65540"), "\(property)")

            // Register with TXT and a subtype: avahi-browse resolves it and finds it through the subtype.
            let watch = try peer.spawn(["avahi-browse", "-p", "-r", type])
            let subtypeWatch = try peer.spawn(["avahi-browse", "-p", "_printer._sub.\(type)"])
            let register = try local.spawn([lite, "-t", "20", "-R", "Herald Lib", "\(type),_printer", "local.", "4502", "key=value", "flag"],
                                           environment: environment)
            try register.waitForOutput(containing: "Name now registered and active", timeout: 10)
            let resolved = waitUntil(timeout: 10) {
                watch.avahiEntries.contains { $0.event == .resolved && $0.name == "Herald Lib" && $0.port == 4502 }
            }
            #expect(resolved.held, "avahi-browse -r: \(watch.output)\nheraldd:\n\(daemon.log)")
            if let entry = watch.avahiEntries.first(where: { $0.event == .resolved && $0.name == "Herald Lib" }) {
                #expect(Set(entry.txt) == ["key=value", "flag"], "\(entry)")
                #expect(entry.hostName == "\(daemon.hostName).local", "\(entry)")
            }
            #expect(waitUntil(timeout: 5) { subtypeWatch.avahiEntries.contains { $0.event == .added && $0.name == "Herald Lib" } }.held,
                    "subtype: \(subtypeWatch.output)")
            register.send(SIGINT)

            // Record calls: the TXT update works; add-record and register-record return the daemon's answer.
            let recordsRun = try local.spawn([probe, "records", "_hlibrec._tcp"], environment: environment)
            try recordsRun.waitForOutput(containing: "update-txt return=0", in: .stdout, timeout: 10)
            // The new TXT record (DNSServiceUpdateRecord without a record reference) reached Avahi's cache.
            usleep(800_000)
            let seen = try peer.run(["avahi-browse", "-p", "-r", "-t", "_hlibrec._tcp"], timeout: 10)
            #expect(seen.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                        .contains { $0.event == .resolved && $0.name == "Probe Records" && $0.txt == ["a=two"] }, "\(seen)")
            let records = recordsRun.result(timeout: 15)
            #expect(records.stdout.contains("register return=0"), "\(records)")
            let daemonAnswers = ["0", "-65544"]  // NoError once heraldd supports them; Unsupported until then
            #expect(daemonAnswers.contains { records.stdout.contains("add-record return=\($0) ") }, "\(records)")
            #expect(daemonAnswers.contains { records.stdout.contains("register-record return=\($0)\n") }, "\(records)")

            // Every request the library sent was one heraldd could decode (it drops clients that send malformed ones).
            #expect(!daemon.log.contains("malformed"), "\(daemon.log)")

            // A daemon that goes away ends the event loop with ServiceNotRunning, not a crash or a hang.
            let browsing = try local.spawn([lite, "-B", type], environment: environment)
            try browsing.waitForOutput(containing: "Avahi Lib", in: .stdout, timeout: 10)
            daemon.stop()
            #expect(browsing.waitForExit(timeout: 5) == 1, "\(browsing.output)")
            #expect(browsing.stderr.contains("DNSServiceProcessResult: error -65563"), "\(browsing.output)")
        }

        @Test("the NoAuth probe prints each gated operation's return value and callback errors (NoError or NoAuth only)")
        func noAuthProbe() throws {
            let probe = try LibDNSSDPrograms.compile("Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            let daemon = try local.startHeraldd()
            let avahi = try peer.startAvahi()
            let publisher = try peer.spawn(["avahi-publish", "-s", "Avahi Auth", "_hauth._tcp", "4601"])
            try publisher.waitForOutput(containing: "Established under name", timeout: 15)
            let result = try local.run([probe, "noauth", "_hauth._tcp", "Avahi Auth", "\(avahi.hostName).local", "3"],
                                       environment: try LibDNSSDPrograms.environment(socket: daemon.socket))
            print("$ dnssd_probe noauth _hauth._tcp 'Avahi Auth' \(avahi.hostName).local 3\n\(result.stdout)")
            #expect(result.succeeded, "\(result)")
            for operation in ["browse", "resolve", "register", "query", "addrinfo"] {
                #expect(result.stdout.contains("\(operation) return=0\n") || result.stdout.contains("\(operation) return=-65555\n"),
                        "\(operation): \(result)")
            }
            let errors = Set(result.stdout.split(separator: " ").filter { $0.hasPrefix("error=") })
            #expect(errors.isSubset(of: ["error=0", "error=-65555"]), "\(result)")
            // With heraldd allowing everything (no broker configured), the operations deliver results.
            #expect(result.stdout.contains("browse flags=") && result.stdout.contains("name=Avahi Auth"), "\(result)")
        }
    }
}
