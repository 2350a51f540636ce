import HeraldEngine
import HeraldWire
import Testing

@Suite("Tie-breaking, conflicts and renaming (RFC 6762 §8.2, §9)")
struct ConflictTests {
    let printer = Fixture.instance("Printer")

    @Test(
        "two hosts register the same service name at the same moment; the one with the lexicographically later data keeps it; the other becomes `Name (2)` within 2 s"
    )
    func simultaneousRegistration() throws {
        for seed in UInt64(1)...6 {
            var lan = SimulatedLAN(seed: seed)
            let alpha = lan.addHost("alpha", seed: seed * 31)
            let beta = lan.addHost("beta", seed: seed * 37)
            lan.run(for: 3000)
            let start = lan.now
            lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
            lan.with(beta) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
            lan.run(for: 5000)
            // The TXT records are equal, so the SRV records decide: their rdata are the same up to the target, whose
            // first byte is the length of its first label — 5 for "alpha", 4 for "beta". Alpha's data is later.
            let alphaNames = lan.registrations(of: alpha, OperationID(1))
            let betaNames = lan.registrations(of: beta, OperationID(1))
            #expect(alphaNames.map(\.name) == [printer])
            #expect(betaNames.map(\.name) == [Fixture.instance("Printer (2)")])
            let renamed = try #require(betaNames.first)
            // (plus the simulated wire's latency for the winner's announcement to arrive)
            #expect(
                renamed.time - start <= 2000 + lan.latency,
                "seed \(seed): beta was announced as Printer (2) after \(renamed.time - start) ms")
            // The loser never announced the contested name.
            #expect(lan.multicastResponses(from: beta, containing: printer, type: .srv).isEmpty)
        }
    }

    @Test("the loser of a tie-break waits one second, probes again, and keeps the name if the other host goes quiet")
    func tieBreakLoserWaitsOneSecond() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        // A scripted host probes for the same name, once, answering alpha's first probe. It proposes the same TXT record
        // and an SRV record with a later port (9999 > 631): sorted and compared pairwise (RFC 6762 §8.2), its data is later.
        let later = [
            Self.emptyTXT(printer), Fixture.srv(printer, port: 9999, target: "alpha.local.").with(cacheFlush: false),
        ]
        let name = printer
        let peer = SimulatedLAN.peer(1)
        var probed = false
        lan.reactors.append { packet in
            guard !probed, let message = packet.message, !message.authorities.isEmpty,
                message.questions.contains(where: { $0.name == name })
            else { return [] }
            probed = true
            return [SimulatedLAN.Injection(bytes: DNSMessage.probe(later).wire, source: peer, delay: 10)]
        }
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        let probes = lan.probes(from: alpha, for: printer)
        try #require(probes.count >= 4)
        let lostAt = probes[0].time + 10 + lan.latency
        // No probe for the name within the second after losing; then a full new round of three.
        #expect(probes[1].time - lostAt >= 1000)
        #expect(probes[1].time - lostAt <= 1000 + 250)
        #expect(probes.count == 4, "one probe before the loss, then three (the peer probed only once)")
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
    }

    /// The TXT record a registration without TXT data publishes (one empty string), as a peer would propose it.
    static func emptyTXT(_ name: DNSName) -> ResourceRecord {
        ResourceRecord(name: name, ttl: 4500, data: .txt(.empty))
    }

    @Test(
        "a lone SRV record proposed by another host beats our TXT and SRV: the lists are compared in (class, type, data) order"
    )
    func tieBreakComparesSortedLists() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        // Their first record is an SRV (type 33), ours a TXT (type 16): theirs is later, whatever the SRV says.
        let lone = Fixture.srv(printer, port: 1, target: "a.local.").with(cacheFlush: false)
        let name = printer
        var probed = false
        lan.reactors.append { packet in
            guard !probed, let message = packet.message, !message.authorities.isEmpty,
                message.questions.contains(where: { $0.name == name })
            else { return [] }
            probed = true
            return [
                SimulatedLAN.Injection(bytes: DNSMessage.probe([lone]).wire, source: SimulatedLAN.peer(1), delay: 10)
            ]
        }
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        let probes = lan.probes(from: alpha, for: printer)
        try #require(probes.count == 4)
        #expect(probes[1].time - probes[0].time >= 1000)
    }

    @Test("the winner of a tie-break ignores the other probe and carries on with its schedule")
    func tieBreakWinnerCarriesOn() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        let earlier = [
            Self.emptyTXT(printer), Fixture.srv(printer, port: 1, target: "alpha.local.").with(cacheFlush: false),
        ]
        let name = printer
        let peer = SimulatedLAN.peer(1)
        lan.reactors.append { packet in
            guard let message = packet.message, !message.authorities.isEmpty,
                message.questions.contains(where: { $0.name == name })
            else { return [] }
            return [SimulatedLAN.Injection(bytes: DNSMessage.probe(earlier).wire, source: peer, delay: 10)]
        }
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 3000)
        let probes = lan.probes(from: alpha, for: printer)
        #expect(probes.count == 3)
        #expect(probes.gaps { Int($0.time.milliseconds) } == [250, 250])
        let registered = try #require(lan.registrations(of: alpha, OperationID(1)).first)
        #expect(registered.name == printer)
        #expect(registered.time - probes[2].time == 250)
    }

    @Test("a name held by another host is renamed `Name (2)`, then `Name (3)` when that is taken too")
    func renamesUntilFree() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let taken: Set<DNSName> = [printer, Fixture.instance("Printer (2)")]
        lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { taken.contains($0) })
        lan.run(for: 2000)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [Fixture.instance("Printer (3)")])
        #expect(lan.hosts[alpha].engine.registeredName(of: OperationID(1)) == Fixture.instance("Printer (3)"))
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 2)
    }

    @Test("a defender's unicast reply to the first (QU) probe is a conflict; one that comes too late is not")
    func unicastDefence() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        let name = printer
        let peer = SimulatedLAN.peer(1)
        // The defender answers the QU probe by unicast, at once; and, three seconds later, again (too late to count).
        lan.reactors.append { packet in
            guard let message = packet.message, !message.authorities.isEmpty,
                message.questions.contains(where: { $0.name == name && $0.unicastResponse })
            else { return [] }
            let reply = DNSMessage.response([Fixture.srv(name)]).wire
            return [
                SimulatedLAN.Injection(bytes: reply, source: peer, receiver: 0, toUnicast: true),
                SimulatedLAN.Injection(bytes: reply, source: peer, delay: 3000, receiver: 0, toUnicast: true),
            ]
        }
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 8000)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [Fixture.instance("Printer (2)")])
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 1)
    }

    @Test("an established name that sees one conflicting record probes again and keeps the name when nobody defends it")
    func establishedTransientConflict() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 10_000)
        lan.with(alpha) { $0.resolve(OperationID(5), instance: printer, at: $1) }
        lan.run(for: 1000)
        let conflictAt = lan.now
        lan.inject(.response([Fixture.srv(printer)]), from: SimulatedLAN.peer(1))
        lan.run(for: 5000)
        // The other host's record never replaced our own in what local clients see.
        let seen = lan.events(of: alpha, OperationID(5)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0.port == 631 && $0.target == "alpha.local." }, "\(seen)")
        let reprobes = lan.probes(from: alpha, for: printer).filter { $0.time > conflictAt }
        #expect(reprobes.count == 3, "RFC 6762 §9: reset to probing")
        #expect(reprobes.first.map { $0.time - conflictAt } ?? .max <= 251)
        let reannounced = lan.multicastResponses(from: alpha, containing: printer, type: .srv).filter {
            $0.time > conflictAt
        }
        #expect(!reannounced.isEmpty)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
        #expect(lan.hosts[alpha].engine.registeredName(of: OperationID(1)) == printer)
    }

    @Test("an established name whose conflict persists through the new probes is renamed")
    func establishedPersistentConflict() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 10_000)
        let name = printer
        lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { $0 == name })
        let conflictAt = lan.now
        lan.inject(.response([Fixture.srv(printer)]), from: SimulatedLAN.peer(1))
        lan.run(for: 5000)
        let names = lan.registrations(of: alpha, OperationID(1))
        #expect(names.map(\.name) == [printer, Fixture.instance("Printer (2)")])
        #expect(lan.probes(from: alpha, for: printer).filter { $0.time > conflictAt }.count >= 1)
    }

    @Test("with automatic renaming turned off, a taken name fails the registration with a name conflict")
    func noAutoRename() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let name = printer
        lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { $0 == name })
        lan.run(for: 2000)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer", autoRename: false), at: $1) }
        lan.run(for: 5000)
        #expect(lan.events(of: alpha, OperationID(1)).map(\.event) == [.registrationFailed(.nameConflict)])
        #expect(lan.probes(from: alpha, for: printer).count == 1)
        #expect(lan.multicastResponses(from: alpha, containing: printer).isEmpty)
        #expect(lan.hosts[alpha].engine.registeredName(of: OperationID(1)) == nil)
    }

    @Test(
        "two hosts with the same host name: the later address keeps it, the other becomes `host-2` and its services follow"
    )
    func hostRename() throws {
        var lan = SimulatedLAN()
        let first = lan.addHost("alpha")  // 10.0.0.1
        let second = lan.addHost("alpha")  // 10.0.0.2: the later address data wins
        lan.with(first) { $0.register(OperationID(1), Fixture.service("Zero"), at: $1) }
        lan.run(for: 6000)
        #expect(lan.hosts[first].engine.hostLabel == "alpha-2")
        #expect(lan.hosts[second].engine.hostLabel == "alpha")
        #expect(lan.hosts[first].engine.hostName == "alpha-2.local.")
        // The service's SRV record names the new host name.
        let srvs = lan.multicastResponses(from: first, containing: Fixture.instance("Zero"), type: .srv)
            .flatMap { $0.message.answers.filter { $0.type == .srv } }
        #expect(!srvs.isEmpty)
        #expect(srvs.allSatisfy { $0.data == .srv(SRVData(port: 631, target: "alpha-2.local.")) })
        // The other host resolves it to the renamed host and its address.
        lan.with(second) { $0.resolve(OperationID(9), instance: Fixture.instance("Zero"), at: $1) }
        lan.run(for: 2000)
        let resolved = lan.events(of: second, OperationID(9)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        let service = try #require(resolved.last)
        #expect(service.target == "alpha-2.local.")
        #expect(service.addresses == [.v4(IPv4Address(10, 0, 0, 1))])
        #expect(lan.hosts[second].engine.statistics.conflicts == 0)
    }

    @Test("after fifteen conflicts within ten seconds, new names are probed at most once every five seconds")
    func conflictRateLimit() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let type = Fixture.ippType
        // A hostile peer claims every IPP instance name.
        lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { $0.parent == type })
        lan.run(for: 2000)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 60_000)
        var firstProbes: [(name: DNSName, time: Instant)] = []
        for probe in lan.probes(from: alpha) {
            guard let name = probe.message.questions.first?.name, name.parent == type else { continue }
            if !firstProbes.contains(where: { $0.name == name }) { firstProbes.append((name, probe.time)) }
        }
        let gaps = firstProbes.gaps { Int($0.time.milliseconds) }
        try #require(gaps.count >= 20, "got \(firstProbes.count) names")
        // Fifteen quick attempts (each renamed within 0–250 ms of a conflict), then one every five seconds or more.
        #expect(gaps.prefix(14).allSatisfy { $0 <= 260 }, "\(gaps)")
        #expect(gaps.dropFirst(14).allSatisfy { $0 >= 5000 }, "\(gaps)")
        #expect(lan.registrations(of: alpha, OperationID(1)).isEmpty)
        // The limit is the host's: a new, uncontested registration waits too, then succeeds.
        let scanner: DNSName = "Scanner._scanner._tcp.local."
        let registeredAt = lan.now
        lan.with(alpha) {
            $0.register(
                OperationID(2), ServiceRegistration(instance: "Scanner", type: "_scanner._tcp.local.", port: 9), at: $1)
        }
        lan.run(for: 8000)
        let firstProbe = try #require(lan.probes(from: alpha, for: scanner).first)
        #expect(firstProbe.time - registeredAt >= 5000)
        #expect(lan.registrations(of: alpha, OperationID(2)).map(\.name) == [scanner])
    }

    @Test("a reverse-mapping PTR is announced but never probed, and another host's claim on it renames nothing")
    func reversePTRConflictRenamesNothing() throws {
        var lan = SimulatedLAN()
        // A peer that answers every probe for a reverse name as if it were its own.
        lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { $0.hasSuffix("in-addr.arpa.") })
        let alpha = lan.addHost("alpha")  // 10.0.0.1
        let beta = lan.addHost("beta")  // 10.0.0.2
        lan.run(for: 5000)
        let reverse = IPAddress.v4(IPv4Address(10, 0, 0, 1)).reverseName
        // Beta gets alpha's address too (a duplicate address, a common misconfiguration), and so publishes the same
        // reverse name pointing at itself; a third party claims it as well, again and again.
        lan.addInterface(to: beta, interfaceIndex: 2, address: .v4(IPv4Address(10, 0, 0, 1)))
        for second in 0..<30 {
            lan.inject(
                .response([ResourceRecord(name: reverse, ttl: 120, data: .ptr("evil.local."), cacheFlush: true)]),
                from: SimulatedLAN.peer(1), after: second * 1000)
        }
        lan.run(for: 40_000)
        // No rename could end it (the name comes from the address): neither host renames, or counts a conflict.
        #expect(lan.hosts[alpha].engine.hostLabel == "alpha")
        #expect(lan.hosts[beta].engine.hostLabel == "beta")
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
        // Probes never ask for a reverse name; announcements carry the PTR, with the cache-flush bit.
        let probedNames = lan.probes(from: alpha).flatMap(\.message.questions).map(\.name)
        #expect(!probedNames.isEmpty && !probedNames.contains { $0.hasSuffix("in-addr.arpa.") })
        let announced = lan.multicastResponses(from: alpha, containing: reverse, type: .ptr)
            .flatMap(\.message.answers).filter { $0.name == reverse }
        #expect(!announced.isEmpty && announced.allSatisfy { $0.cacheFlush && $0.data == .ptr("alpha.local.") })
        // Alpha still answers for it.
        let asked = lan.now
        lan.inject(.query([Fixture.question(reverse, .ptr)]), from: SimulatedLAN.peer(2))
        lan.run(for: 1000)
        let answers = lan.multicastResponses(from: alpha, containing: reverse, type: .ptr).filter { $0.time > asked }
            .flatMap(\.message.answers).filter { $0.name == reverse }
        #expect(answers.contains { $0.data == .ptr("alpha.local.") })
    }
}
