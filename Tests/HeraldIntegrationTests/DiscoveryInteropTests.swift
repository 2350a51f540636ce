import Foundation
import Testing

extension HeraldOnTestLANs {
    /// Herald finds and resolves what real peers publish: Avahi (`avahi-publish`) and python-zeroconf, each
    /// on IPv4 and IPv6 together and on one of them alone (docs/scenarios.md, "Interoperability").
    @Suite(
        "Herald discovers Avahi and python-zeroconf services",
        .serialized
    )
    struct DiscoveryInteropTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// What a peer publishes, as herald should report it.
        struct Published {
            var name: String
            var host: String
            var port: Int
            /// Addresses the answer must include …
            var required: Set<String>
            /// … and may include (beyond these, an address is wrong).
            var allowed: Set<String>
            /// The TXT strings, in any order (the exact bytes are checked against a legacy query of the peer).
            var txt: Set<String>
            /// Where to send the legacy unicast TXT query that gives the exact bytes.
            var queryAddress: String
        }

        @Test(
            "herald browse --resolve, resolve, lookup, query and browse --all see Avahi and zeroconf services over IPv4 and IPv6"
        )
        func discoversPeers() throws {
            let lan = try TestLAN(hosts: 5)
            defer { lan.shutdown() }
            let (local, avahiBoth, avahiSix, zeroconfFour, zeroconfSix) = (
                lan.hosts[0], lan.hosts[1], lan.hosts[2], lan.hosts[3], lan.hosts[4]
            )
            let type = "_hinterop._tcp"

            let daemon = try local.startHeraldd()
            try inParallel([
                { _ = try avahiBoth.startAvahi() },
                { _ = try avahiSix.startAvahi(useIPv4: false) },
            ])
            let avahiTXT = ["path=/x", "spaced=hello world", "flag", "empty=", "utf8=café", "eq=a=b", "ctl=\u{01}x"]
            let bothPublisher = try avahiBoth.spawn(
                ["avahi-publish", "-s", "--subtype", "_printer._sub.\(type)", "Avahi Both", type, "4101"]
                    + avahiTXT)
            let sixPublisher = try avahiSix.spawn(["avahi-publish", "-s", "Avahi Six", type, "4102", "only=six"])
            let zeroconfScript = { (name: String, port: Int, addresses: String) in
                """
                info = ServiceInfo(
                    "\(type).local.", "\(name).\(type).local.", port=\(port),
                    properties={"bin": b"\\x00\\xff\\x80", "flag": None, "empty": b"", "text": "a b"},
                    server=HOST_NAME + ".local.", parsed_addresses=\(addresses))
                zc.register_service(info)
                ready("registered")
                wait_forever()
                """
            }
            let four = try zeroconfFour.startZeroconf(
                script: zeroconfScript("Zeroconf Four", 4103, "[HOST_IPV4]"), ipv6: false)
            let six = try zeroconfSix.startZeroconf(
                script: zeroconfScript("Zeroconf Six", 4104, "[HOST_IPV6]"), ipv4: false)
            try bothPublisher.waitForOutput(containing: "Established under name 'Avahi Both'", timeout: 15)
            try sixPublisher.waitForOutput(containing: "Established under name 'Avahi Six'", timeout: 15)
            try four.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
            try six.waitForOutput(containing: "registered", in: .stdout, timeout: 15)

            let zeroconfTXT: Set<String> = ["bin=\\x00\\xff\\x80", "flag", "empty=", "text=a b"]
            let published = [
                Published(
                    name: "Avahi Both", host: "\(avahiBoth.avahi!.hostName).local.", port: 4101,
                    required: [avahiBoth.ipv4, avahiBoth.ipv6],
                    allowed: [avahiBoth.ipv4, avahiBoth.ipv6, avahiBoth.linkLocal],
                    txt: Set(avahiTXT.map { $0.replacingOccurrences(of: "\u{01}", with: "\\x01") }),
                    queryAddress: avahiBoth.ipv4),
                Published(
                    name: "Avahi Six", host: "\(avahiSix.avahi!.hostName).local.", port: 4102,
                    required: [avahiSix.ipv6], allowed: [avahiSix.ipv6, avahiSix.linkLocal, avahiSix.ipv4],
                    txt: ["only=six"], queryAddress: avahiSix.ipv6),
                Published(
                    name: "Zeroconf Four", host: "\(zeroconfFour.name).local.", port: 4103,
                    required: [zeroconfFour.ipv4], allowed: [zeroconfFour.ipv4], txt: zeroconfTXT,
                    queryAddress: zeroconfFour.ipv4),
                Published(
                    name: "Zeroconf Six", host: "\(zeroconfSix.name).local.", port: 4104,
                    required: [zeroconfSix.ipv6], allowed: [zeroconfSix.ipv6], txt: zeroconfTXT,
                    queryAddress: zeroconfSix.ipv6),
            ]
            // The exact TXT bytes each peer serves, from a legacy unicast query of the peer itself.
            var exactTXT: [String: String] = [:]
            for service in published {
                let replies = try local.legacyQuery(
                    "\(service.name).\(type).local", type: 16, server: service.queryAddress,
                    timeout: 3, maxReplies: 1)
                let answer = try #require(
                    replies.first?.answers.first { $0.type == 16 }, "\(service.name): no TXT in \(replies)")
                exactTXT[service.name] = answer.value
            }

            // browse --resolve: + and = for each instance, with every address and the TXT record.
            let browse = try daemon.spawnHerald(["browse", type, "--resolve", "--json"])
            let latest = { () -> [String: [String: Any]] in
                var byName: [String: [String: Any]] = [:]
                for object in browse.jsonLines where object["event"] as? String == "resolved" {
                    byName[object["name"] as? String ?? ""] = object
                }
                return byName
            }
            let complete = waitUntil(timeout: 20) {
                let resolved = latest()
                return published.allSatisfy { service in
                    let addresses = Set(resolved[service.name]?["addresses"] as? [String] ?? [])
                    return service.required.isSubset(of: addresses)
                }
            }
            browse.send(SIGINT)
            #expect(browse.waitForExit(timeout: 5) == 0, "herald browse: \(browse.output)")
            #expect(
                complete.held,
                "herald browse --resolve did not resolve every service:\n\(browse.output)\nheraldd:\n\(daemon.log)")
            let added = Set(
                browse.jsonLines.filter { $0["event"] as? String == "add" }.compactMap { $0["name"] as? String })
            #expect(added == Set(published.map(\.name)), "\(browse.stdout)")
            for service in published {
                check(
                    latest()[service.name], against: service, exactTXT: exactTXT[service.name], type: type,
                    what: "browse --resolve")
            }

            // resolve: the same answer for each, one-shot.
            for service in published {
                let result = try daemon.herald(["resolve", service.name, type, "--json"])
                #expect(result.status == 0, "herald resolve \(service.name): \(result)")
                let objects = HeraldJSON.objects(result.stdout)
                #expect(objects.count == 1, "\(result)")
                check(objects.first, against: service, exactTXT: exactTXT[service.name], type: type, what: "resolve")
            }
            // The human form shows the same, aligned.
            let text = try daemon.herald(["resolve", "Zeroconf Four", type])
            #expect(text.status == 0, "\(text)")
            let everything = try daemon.herald(["browse", type, "--resolve", "--timeout", "2"])
            print(
                "$ herald browse \(type) --resolve --timeout 2   (Avahi and python-zeroconf peers)\n\(everything.stdout)"
            )
            #expect(
                text.stdout == """
                    Zeroconf Four.\(type).local.
                      interface  \(local.interface)
                      host       \(zeroconfFour.name).local.:4103
                      addresses  \(zeroconfFour.ipv4)
                      txt        'bin=\\x00\\xff\\x80' flag empty= 'text=a b'

                    """, "\(text)")

            // lookup and query.
            let lookupFour = try daemon.herald(["lookup", "\(zeroconfFour.name).local", "--json"])
            #expect(lookupFour.status == 0, "\(lookupFour)")
            #expect(
                HeraldJSON.objects(lookupFour.stdout).compactMap { $0["address"] as? String } == [zeroconfFour.ipv4],
                "\(lookupFour)")
            let lookupSix = try daemon.herald(["lookup", avahiSix.avahi!.hostName])
            #expect(lookupSix.status == 0 && lookupSix.stdout.contains("  \(avahiSix.ipv6)\n"), "\(lookupSix)")
            let srv = try daemon.herald(["query", "Zeroconf Six.\(type).local", "SRV", "--json"])
            #expect(srv.status == 0, "\(srv)")
            #expect(
                HeraldJSON.objects(srv.stdout).map { $0["data"] as? String } == ["0 0 4104 \(zeroconfSix.name).local."],
                "\(srv)")
            // heraldd hands the name over escaped as the C API does (Zeroconf\032Six); herald prints it with its space.
            #expect(
                HeraldJSON.objects(srv.stdout).map { $0["name"] as? String } == ["Zeroconf Six.\(type).local."],
                "\(srv)")
            let missing = try daemon.herald(["resolve", "Nobody Here", type, "--timeout", "1"])
            #expect(missing.status == 1 && missing.stderr.contains("no answer within 1 s"), "\(missing)")

            // browse --all: the type is listed.
            let all = try daemon.herald(["browse", "--all", "--timeout", "2.5", "--json"])
            #expect(all.status == 0, "\(all)")
            let types = Set(HeraldJSON.objects(all.stdout).compactMap { $0["type"] as? String })
            #expect(types.contains("\(type)."), "browse --all: \(all)")

            // A subtype browse finds only the instance that has the subtype.
            let subtype = try daemon.herald(["browse", "_printer._sub.\(type)", "--timeout", "2.5", "--json"])
            #expect(subtype.status == 0, "\(subtype)")
            #expect(
                HeraldJSON.objects(subtype.stdout).compactMap { $0["name"] as? String } == ["Avahi Both"], "\(subtype)")
            #expect(HeraldJSON.objects(subtype.stdout).first?["type"] as? String == "\(type).", "\(subtype)")

            // Withdrawals reach herald too: the zeroconf service says goodbye.
            let watcher = try daemon.spawnHerald(["browse", type, "--json"])
            #expect(waitUntil(timeout: 10) { watcher.jsonLines.count >= 4 }.held, "\(watcher.output)")
            four.terminate(grace: 5)
            let gone = waitUntil(timeout: 5) {
                watcher.jsonLines.contains {
                    $0["event"] as? String == "remove" && $0["name"] as? String == "Zeroconf Four"
                }
            }
            watcher.send(SIGINT)
            watcher.waitForExit(timeout: 5)
            #expect(gone.held, "no - for Zeroconf Four after its goodbye: \(watcher.output)")
        }

        @Test(
            "a browse with nothing cached asks for unicast replies, and heraldd takes python-zeroconf's unicast answer; with unicast-first-queries = no it asks for multicast ones",
            arguments: [true, false])
        func takesUnicastAnswers(unicastFirstQueries: Bool) throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            let type = "_hunicast._tcp"
            let zeroconf = try peer.startZeroconf(
                script: """
                    info = ServiceInfo("\(type).local.", "Unicast Reply.\(type).local.", port=4200,
                                       server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4])
                    zc.register_service(info)
                    ready("registered")
                    wait_forever()
                    """, ipv6: false)
            try zeroconf.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
            // Started after the peer's announcements, so its cache is empty.
            let config = local.directory + "/heraldd-unicast.conf"
            try "[network]\nunicast-first-queries = \(unicastFirstQueries ? "yes" : "no")\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let daemon = try local.startHeraldd(arguments: ["--config", config])
            let before = HeraldJSON.objects(try daemon.control(["status", "--json"]).stdout).first ?? [:]
            #expect(before["unicastResponsesReceived"] as? Int == 0, "\(before)")

            // python-zeroconf answers a QU question about a record it multicast recently by unicast (RFC 6762
            // §5.4); heraldd's first query is one, so the answer comes by unicast and must be taken.
            let browse = try daemon.herald(["browse", type, "--timeout", "2", "--json"])
            let added = HeraldJSON.objects(browse.stdout).filter { $0["event"] as? String == "add" }
            #expect(added.map { $0["name"] as? String } == ["Unicast Reply"], "\(browse)")
            let after = HeraldJSON.objects(try daemon.control(["status", "--json"]).stdout).first ?? [:]
            let taken = after["unicastResponsesReceived"] as? Int ?? -1
            if unicastFirstQueries {
                #expect(taken >= 1, "\(after)\nheraldd:\n\(daemon.log)")
            } else {
                #expect(taken == 0, "\(after)\nheraldd:\n\(daemon.log)")
            }
        }

        private func check(
            _ object: [String: Any]?, against service: Published, exactTXT: String?, type: String, what: String
        ) {
            guard let object else {
                Issue.record("\(what): nothing for \(service.name)")
                return
            }
            #expect(object["type"] as? String == "\(type).", "\(what) \(service.name): \(object)")
            #expect(object["domain"] as? String == "local.", "\(what) \(service.name): \(object)")
            #expect(
                (object["host"] as? String)?.lowercased() == service.host.lowercased(),
                "\(what) \(service.name): \(object)")
            #expect(object["port"] as? Int == service.port, "\(what) \(service.name): \(object)")
            let addresses = object["addresses"] as? [String] ?? []
            #expect(service.required.isSubset(of: Set(addresses)), "\(what) \(service.name): addresses \(addresses)")
            #expect(Set(addresses).isSubset(of: service.allowed), "\(what) \(service.name): addresses \(addresses)")
            #expect(
                addresses.count == Set(addresses).count, "\(what) \(service.name): duplicate addresses \(addresses)")
            #expect(Set(object["txt"] as? [String] ?? []) == service.txt, "\(what) \(service.name): \(object)")
            #expect(
                object["txtHex"] as? String == exactTXT, "\(what) \(service.name): TXT bytes differ from the peer's")
        }
    }
}
