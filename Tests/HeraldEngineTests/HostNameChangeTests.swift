import HeraldEngine
import HeraldWire
import Testing

@Suite("An operator's change of host name (Avahi's SetHostName)")
struct HostNameChangeTests {
    let zero = Fixture.instance("Zero")
    let reverse: DNSName = "1.0.0.10.in-addr.arpa."

    /// Two hosts that have settled, the first publishing a service named `Zero`.
    func settledLAN() -> (lan: SimulatedLAN, alpha: Int, beta: Int) {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")  // 10.0.0.1
        let beta = lan.addHost("beta")  // 10.0.0.2
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Zero"), at: $1)
            // Registered without a name: named after the host.
            $0.register(OperationID(2), Fixture.service("", port: 632), at: $1)
        }
        lan.run(for: 6000)
        return (lan, alpha, beta)
    }

    @Test(
        "the old name's address and reverse records say goodbye, the new name is probed and announced, and the service's SRV record follows"
    )
    func goodbyesProbesAndServicesFollow() throws {
        var (lan, alpha, beta) = settledLAN()
        let changedAt = lan.now
        lan.with(alpha) { $0.setHostName("gamma", at: $1) }
        #expect(lan.hosts[alpha].engine.hostLabel == "gamma")
        #expect(lan.hosts[alpha].engine.hostName == "gamma.local.")
        lan.run(for: 4000)
        let after = lan.packets(from: alpha).filter { $0.time >= changedAt }
        let goodbyes = after.filter { $0.message.isResponse }.flatMap(\.message.answers).filter { $0.ttl == 0 }
        #expect(goodbyes.contains { $0.name == "alpha.local." && $0.data == .a(IPv4Address(10, 0, 0, 1)) })
        #expect(goodbyes.contains { $0.name == reverse && $0.data == .ptr("alpha.local.") })
        // Nothing of the new name, and nothing of the service, is said goodbye to.
        #expect(!goodbyes.contains { $0.name == "gamma.local." || $0.name == zero })
        #expect(!goodbyes.contains { $0.name == reverse && $0.data == .ptr("gamma.local.") })
        // The goodbyes go before the first probe of the new name, which is probed three times (RFC 6762 §8.1)…
        let probes = lan.probes(from: alpha, for: "gamma.local.")
        #expect(probes.count == 3)
        let firstGoodbye = try #require(
            after.first { packet in packet.message.isResponse && packet.message.answers.contains { $0.ttl == 0 } })
        #expect(try #require(probes.first).time >= firstGoodbye.time)
        #expect(lan.probes(from: alpha, for: "alpha.local.").allSatisfy { $0.time < changedAt })
        // …then announced, with its reverse PTR naming it.
        let announced = lan.multicastResponses(from: alpha, containing: "gamma.local.", type: .a)
            .filter { $0.time >= changedAt }
        let firstAnnouncement = try #require(announced.first)
        let lastProbe = try #require(probes.last)
        #expect(firstAnnouncement.time > lastProbe.time)
        #expect(
            lan.multicastResponses(from: alpha, containing: reverse, type: .ptr).filter { $0.time >= changedAt }
                .flatMap(\.message.answers).contains {
                    $0.name == reverse && $0.data == .ptr("gamma.local.") && $0.ttl > 0
                })
        // The service keeps its name; its SRV record names the new host, and a peer resolving it follows.
        let srvs = lan.multicastResponses(from: alpha, containing: zero, type: .srv).filter { $0.time >= changedAt }
            .flatMap(\.message.answers).filter { $0.type == .srv && $0.ttl > 0 }
        #expect(!srvs.isEmpty)
        #expect(srvs.allSatisfy { $0.data == .srv(SRVData(port: 631, target: "gamma.local.")) })
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [zero])
        // The service registered without a name said goodbye under the old host name, and took the new one.
        #expect(
            lan.registrations(of: alpha, OperationID(2)).map(\.name) == [
                Fixture.instance("alpha"), Fixture.instance("gamma"),
            ])
        #expect(goodbyes.contains { $0.name == Fixture.instance("alpha") && $0.type == .srv })
        #expect(!goodbyes.contains { $0.name == Fixture.instance("gamma") })
        lan.with(beta) { $0.resolve(OperationID(9), instance: zero, at: $1) }
        lan.run(for: 2000)
        let resolved = lan.events(of: beta, OperationID(9)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        #expect(try #require(resolved.last).target == "gamma.local.")
        // The peer's cache keeps no record of the old name.
        var cached: [CachedRecord] = []
        lan.with(beta) { engine, _ in cached = engine.cachedRecords(on: SimulatedLAN.ipv4Link) }
        #expect(!cached.contains { $0.record.name == "alpha.local." }, "\(cached.map(\.record))")
        #expect(cached.contains { $0.record.name == "gamma.local." && $0.record.data == .a(IPv4Address(10, 0, 0, 1)) })
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
    }

    @Test("a new name another host holds is renamed `new-2`, counting from the new name")
    func conflictOnTheNewName() throws {
        var (lan, alpha, beta) = settledLAN()
        lan.with(alpha) { $0.setHostName("beta", at: $1) }
        lan.run(for: 6000)
        #expect(lan.hosts[alpha].engine.hostLabel == "beta-2")
        #expect(lan.hosts[beta].engine.hostLabel == "beta")
        let srvs = lan.multicastResponses(from: alpha, containing: zero, type: .srv)
            .flatMap(\.message.answers).filter { $0.type == .srv && $0.ttl > 0 }
        #expect(srvs.last?.data == .srv(SRVData(port: 631, target: "beta-2.local.")))
    }

    @Test("a label that cannot be a host name, or the name in use, changes nothing and sends nothing")
    func invalidOrSameName() throws {
        var (lan, alpha, _) = settledLAN()
        let before = lan.packets(from: alpha).count
        for label in ["", "two.labels", String(repeating: "x", count: 64), "alpha"] {
            lan.with(alpha) { $0.setHostName(label, at: $1) }
            #expect(lan.hosts[alpha].engine.hostLabel == "alpha", "\(label)")
        }
        lan.run(for: 3000)
        #expect(lan.packets(from: alpha).count == before)
    }
}
