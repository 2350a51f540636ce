import Foundation
import Testing

extension HeraldOnTestLANs {
    /// C programs compiled against Debian's dns_sd.h and linked with -ldns_sd run on Herald's library by loader
    /// path alone, against a real heraldd, with Avahi as the peer in another namespace (docs/libdns_sd.md,
    /// "Testing it").
    @Suite("libdns_sd against heraldd and Avahi", .serialized)
    struct LibDNSSDInteropTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "dns-sd-lite browses, resolves and looks up an Avahi service; its registration with TXT and a subtype is seen by avahi-browse; query, shared connection, domains, property and record calls work"
        )
        func cProgramsOnHerald() throws {
            let lite = try LibDNSSDPrograms.compile("Examples/dns-sd-lite/dns-sd-lite.c", named: "dns-sd-lite")
            let probe = try LibDNSSDPrograms.compile(
                "Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
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
            let publisher = try peer.spawn([
                "avahi-publish", "-s", "--subtype", "_printer._sub.\(type)", "Avahi Lib", type, "4501",
                "path=/lib", "flag",
            ])
            try publisher.waitForOutput(containing: "Established under name 'Avahi Lib'", timeout: 15)
            let peerHost = "\(avahi.hostName).local"

            // Browse: the transcript of the example finding Avahi's service.
            let browse = try local.run([lite, "-t", "4", "-B", type], environment: environment)
            print(
                "$ LD_LIBRARY_PATH=\(environment["LD_LIBRARY_PATH"]!) DNSSD_UDS_PATH=\(daemon.socket) dns-sd-lite -t 4 -B \(type)\n\(browse.stdout)"
            )
            #expect(browse.succeeded, "\(browse)")
            #expect(
                browse.stdout.split(separator: "\n").contains {
                    $0.contains("Add") && $0.contains("\(type).") && $0.hasSuffix("Avahi Lib")
                },
                "\(browse)\nheraldd:\n\(daemon.log)")
            #expect(
                !browse.stderr.contains("Apple Bonjour compatibility layer"),
                "Avahi's library was loaded: \(browse.stderr)")

            // Resolve: host, port and TXT.
            let resolve = try local.run([lite, "-t", "3", "-L", "Avahi Lib", type], environment: environment)
            print("$ dns-sd-lite -t 3 -L 'Avahi Lib' \(type)\n\(resolve.stdout)")
            // The full name is escaped as DNSServiceConstructFullName writes it (and as dns-sd prints it): the space as \032.
            #expect(resolve.stdout.contains("Lookup Avahi\\032Lib.\(type).local.\n"), "\(resolve)")
            #expect(
                resolve.stdout.contains("Avahi\\032Lib.\(type).local. can be reached at \(peerHost).:4501"),
                "\(resolve)")
            #expect(resolve.stdout.contains(" path=/lib flag\n"), "\(resolve)")

            // Address lookup (DNSServiceGetAddrInfo, found at run time).
            let addresses = try local.run([lite, "-t", "3", "-G", "v4", peerHost], environment: environment)
            print("$ dns-sd-lite -t 3 -G v4 \(peerHost)\n\(addresses.stdout)")
            #expect(
                addresses.stdout.split(separator: "\n").contains {
                    $0.contains(peerHost) && $0.contains(" \(peer.ipv4) ")
                },
                "\(addresses)")

            // Query record: SRV of the instance (priority 0, weight 0, port 4501 = 0x1195).
            let query = try local.run(
                [probe, "query", "Avahi Lib.\(type).local.", "33", "3"], environment: environment)
            #expect(query.stdout.contains("query return=0"), "\(query)")
            #expect(
                query.stdout.contains("error=0 name=Avahi\\032Lib.\(type).local. type=33 class=1")
                    && query.stdout.contains("rdata=000000001195"), "\(query)")

            // Shared connection: browse and resolve as subordinates; cancelling one leaves the other working.
            let shared = try local.run([probe, "shared", type, "Avahi Lib", "4"], environment: environment)
            #expect(
                shared.stdout.contains("connection return=0") && shared.stdout.contains("subordinate-fd=-1"),
                "\(shared)")
            #expect(
                shared.stdout.contains("browse flags=")
                    && shared.stdout.contains("error=0 name=Avahi Lib type=\(type). domain=local."), "\(shared)")
            #expect(
                shared.stdout.contains("resolve flags=") && shared.stdout.contains("host=\(peerHost). port=4501"),
                "\(shared)")
            #expect(shared.stdout.contains("browse cancelled\nbrowse-again return=0\nbrowse-again flags="), "\(shared)")

            // Domains and the daemon's version.
            let domains = try local.run([probe, "enumerate", "1"], environment: environment)
            #expect(domains.stdout.contains("domain flags=6 if=0 error=0 domain=local."), "\(domains)")
            let property = try local.run([probe, "property"], environment: environment)
            #expect(
                property.stdout.contains("DaemonVersion return=0 size=4 value=")
                    && !property.stdout.contains("value=0\n"), "\(property)")
            #expect(property.stdout.contains("NoSuchProperty return=-65540"), "\(property)")
            // A non-blocking socket with nothing to read: DNSServiceProcessResult returns at once, as Apple's does.
            let nonblocking = try local.run([probe, "nonblocking", "_hnothing._tcp"], environment: environment)
            #expect(
                nonblocking.status == 0 && nonblocking.stdout.contains("nothing-to-read return=0"), "\(nonblocking)")

            // Register with TXT and a subtype: avahi-browse resolves it and finds it through the subtype.
            let watch = try peer.spawn(["avahi-browse", "-p", "-r", type])
            let subtypeWatch = try peer.spawn(["avahi-browse", "-p", "_printer._sub.\(type)"])
            let register = try local.spawn(
                [lite, "-t", "20", "-R", "Herald Lib", "\(type),_printer", "local.", "4502", "key=value", "flag"],
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
            #expect(
                waitUntil(timeout: 5) {
                    subtypeWatch.avahiEntries.contains { $0.event == .added && $0.name == "Herald Lib" }
                }.held,
                "subtype: \(subtypeWatch.output)")
            register.send(SIGINT)

            // Record calls: the TXT update, adding and removing a record, registering one on a shared connection.
            let recordsRun = try local.spawn([probe, "records", "_hlibrec._tcp"], environment: environment)
            try recordsRun.waitForOutput(containing: "update-txt return=0", in: .stdout, timeout: 10)
            // The new TXT record (DNSServiceUpdateRecord without a record reference) reached Avahi's cache.
            usleep(800_000)
            let seen = try peer.run(["avahi-browse", "-p", "-r", "-t", "_hlibrec._tcp"], timeout: 10)
            #expect(
                seen.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                    .contains { $0.event == .resolved && $0.name == "Probe Records" && $0.txt == ["a=two"] }, "\(seen)")
            let records = recordsRun.result(timeout: 15)
            #expect(records.stdout.contains("register return=0"), "\(records)")
            #expect(records.stdout.contains("add-record return=0 record=set"), "\(records)")
            #expect(records.stdout.contains("remove-record return=0"), "\(records)")
            #expect(records.stdout.contains("register-record return=0\n"), "\(records)")

            // Every request the library sent was one heraldd could decode (it drops clients that send malformed ones).
            #expect(!daemon.log.contains("malformed"), "\(daemon.log)")

            // A daemon that goes away ends the event loop with ServiceNotRunning, not a crash or a hang.
            let browsing = try local.spawn([lite, "-B", type], environment: environment)
            try browsing.waitForOutput(containing: "Avahi Lib", in: .stdout, timeout: 10)
            daemon.stop()
            #expect(browsing.waitForExit(timeout: 5) == 1, "\(browsing.output)")
            #expect(browsing.stderr.contains("DNSServiceProcessResult: error -65563"), "\(browsing.output)")
        }

        @Test(
            "with kDNSServiceFlagsReturnIntermediates, a peer's NSEC reaches a C program as NoSuchRecord: a record query of a missing type, and an IPv6 address lookup of an IPv4-only host; without the flag nothing is reported"
        )
        func negativeAnswers() throws {
            let probe = try LibDNSSDPrograms.compile(
                "Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            // The peer, another heraldd, uses IPv4 only: its host name has an A record and an NSEC saying there is
            // no other type (RFC 6762 §6.1).
            let configuration = peer.directory + "/ipv4-only.conf"
            try "[network]\nuse-ipv6 = no\n".write(toFile: configuration, atomically: true, encoding: .utf8)
            let owner = try peer.startHeraldd(hostName: "nsec-owner", arguments: ["--config", configuration])
            defer { owner.stop() }
            let daemon = try local.startHeraldd()
            let environment = try LibDNSSDPrograms.environment(socket: daemon.socket)
            let host = "nsec-owner.local."

            let asked = try local.run([probe, "negative", host, "16", "3"], environment: environment)
            print("$ dnssd_probe negative \(host) 16 3\n\(asked.stdout)")
            #expect(asked.succeeded, "\(asked)\nheraldd:\n\(daemon.log)")
            let lines = asked.stdout.split(separator: "\n").map(String.init)
            /// The Add flag (2) of a callback line; MoreComing (1) may be set beside it.
            func adds(_ line: String) -> Bool {
                line.split(separator: " ").first { $0.hasPrefix("flags=") }.flatMap { UInt32($0.dropFirst(6)) }.map {
                    $0 & 2 != 0
                } ?? false
            }
            // TXT (16) of the host name: NoSuchRecord (-65554) with the Add flag, the question's name and type, no data,
            // and the NSEC's TTL (heraldd gives its host's records 120 s).
            let query = lines.first { $0.hasPrefix("query flags=") }
            #expect(
                query.map {
                    adds($0) && $0.contains("error=-65554 name=\(host) type=16 class=1 ttl=1")
                        && $0.hasSuffix("rdata=")
                } == true, "\(asked)")
            // The IPv6 address lookup: NoSuchRecord for the family, an unspecified IPv6 address.
            let lookup = lines.first { $0.hasPrefix("addrinfo flags=") }
            #expect(
                lookup.map { adds($0) && $0.contains("error=-65554 host=\(host) address=:: ttl=1") } == true,
                "\(asked)")
            #expect(lines.filter { $0.contains("error=-65554") }.count == 2, "reported once each: \(asked)")

            // Without the flag the same question hears nothing: no record, no error.
            let plain = try local.run([probe, "query", host, "16", "2"], environment: environment)
            #expect(plain.succeeded && !plain.stdout.contains("query flags="), "\(plain)")

            // The owner stops: its goodbyes withdraw the NSEC, and both callbacks hear NoSuchRecord without the Add flag.
            let watching = try local.spawn([probe, "negative", host, "16", "6"], environment: environment)
            defer { watching.terminate(grace: 1) }
            try watching.waitForOutput(containing: "addrinfo flags=", in: .stdout, timeout: 5)
            owner.stop()
            let ended = watching.result(timeout: 10)
            let endings = ended.stdout.split(separator: "\n").map(String.init).filter {
                $0.contains("error=-65554") && !adds($0)
            }
            #expect(
                endings.count == 2 && endings.contains { $0.hasPrefix("query ") }
                    && endings.contains { $0.hasPrefix("addrinfo ") },
                "\(ended)\nheraldd:\n\(daemon.log)")
        }

        @Test(
            "NoAuth reaches C programs: the return value for a static denial, the callback's error while parked, results once granted"
        )
        func noAuthProbe() throws {
            let compiled = try LibDNSSDPrograms.compile(
                "Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            let daemon = try local.startPermissionDaemon(area: area)
            let avahi = try peer.startAvahi()
            let publisher = try peer.spawn(["avahi-publish", "-s", "Avahi Auth", "_hauth._tcp", "4601"])
            try publisher.waitForOutput(containing: "Established under name", timeout: 15)
            // The program and Herald's library where the unprivileged app user can reach them.
            let probe = area.directory + "/bin/dnssd_probe"
            try FileManager.default.copyItem(atPath: compiled, toPath: probe)
            let library = area.directory + "/lib"
            try FileManager.default.copyItem(atPath: try LibDNSSDPrograms.libraryDirectory(), toPath: library)
            let environment = ["LD_LIBRARY_PATH": library, "DNSSD_UDS_PATH": daemon.socket]
            let operations = ["browse", "resolve", "register", "query", "addrinfo"]
            let arguments = [probe, "noauth", "_hauth._tcp", "Avahi Auth", "\(avahi.hostName).local"]

            // Not registered: every call returns NoAuth at once.
            let refused = try local.run(try AppUser.command(arguments + ["1"]), timeout: 20, environment: environment)
            print("$ dnssd_probe noauth … (unregistered)\n\(refused.stdout)")
            for operation in operations {
                #expect(refused.stdout.contains("\(operation) return=-65555\n"), "\(operation): \(refused)")
            }

            // Registered, not yet granted: the calls succeed, each callback gets NoAuth; a grant brings results.
            try daemon.control([
                "app", "add",
                try area.writeManifest(
                    [
                        "id": "org.example.cprobe", "name": "C Probe", "executables": [probe],
                        "NSBonjourServices": ["_hauth._tcp"],
                        "NSLocalNetworkUsageDescription": "The probe looks for _hauth services.",
                    ], named: "cprobe.json"),
            ]).expectSuccess()
            let parked = try local.spawn(try AppUser.command(arguments + ["6"]), environment: environment)
            try parked.waitForOutput(containing: "error=-65555", in: .stdout, timeout: 10)
            usleep(500_000)
            try daemon.control(["grant", "org.example.cprobe"]).expectSuccess()
            let result = parked.result(timeout: 20)
            print("$ dnssd_probe noauth … (registered; granted after the first NoAuth)\n\(result.stdout)")
            #expect(result.succeeded, "\(result)")
            for operation in operations {
                #expect(result.stdout.contains("\(operation) return=0\n"), "\(operation): \(result)")
                #expect(
                    result.stdout.contains("\(operation) flags=")
                        && result.stdout.split(separator: "\n").contains {
                            $0.hasPrefix("\(operation) ") && $0.contains("error=-65555")
                        }, "\(operation) was parked: \(result)")
            }
            let firstParked = result.stdout.range(of: "error=-65555")?.lowerBound
            let found = result.stdout.range(of: "name=Avahi Auth")?.lowerBound
            #expect(
                firstParked != nil && found != nil && firstParked! < found!, "results only after the grant: \(result)")
            #expect(result.stdout.contains("resolve flags=") && result.stdout.contains("port=4601"), "\(result)")
        }
    }
}
