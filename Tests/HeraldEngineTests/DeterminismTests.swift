import HeraldEngine
import HeraldWire
import Testing

@Suite("Determinism and robustness on a lossy LAN")
struct DeterminismTests {
    /// Three hosts, a contested name, a browse and a resolve, on a LAN that loses, duplicates and reorders packets.
    func scenario(lanSeed: UInt64, engineSeed: UInt64, lossy: Bool) -> SimulatedLAN {
        var lan = SimulatedLAN(seed: lanSeed)
        if lossy {
            lan.lossPercent = 10
            lan.duplicatePercent = 10
            lan.reorderJitter = 30
        }
        let alpha = lan.addHost("alpha", seed: engineSeed)
        let beta = lan.addHost("beta", seed: engineSeed &+ 1)
        let gamma = lan.addHost("gamma", seed: engineSeed &+ 2)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Shared Name"), at: $1) }
        lan.with(beta) { $0.register(OperationID(1), Fixture.service("Shared Name", port: 632), at: $1) }
        lan.with(gamma) { $0.browse(OperationID(2), type: Fixture.ippType, at: $1) }
        lan.run(for: 4000)
        lan.with(gamma) { $0.resolve(OperationID(3), instance: Fixture.instance("Shared Name"), at: $1) }
        lan.run(for: 26_000)
        return lan
    }

    func log(_ lan: SimulatedLAN) -> [String] {
        lan.wire.map { "\($0.time.milliseconds) \($0.sender) \($0.link) \($0.destination) \($0.bytes)" }
    }

    @Test("the same seeds give byte-identical wire logs; other seeds give other ones")
    func sameSeedSameWire() {
        let first = log(scenario(lanSeed: 7, engineSeed: 42, lossy: true))
        let second = log(scenario(lanSeed: 7, engineSeed: 42, lossy: true))
        #expect(first.count > 20)
        #expect(first == second)
        #expect(log(scenario(lanSeed: 7, engineSeed: 43, lossy: true)) != first)
        #expect(log(scenario(lanSeed: 8, engineSeed: 42, lossy: true)) != first)
    }

    @Test(
        "with 10 % loss, duplication and reordering, a browse still finds both services and the contested names end up distinct",
        arguments: UInt64(1)...8)
    func convergesDespiteLoss(seed: UInt64) throws {
        let lan = scenario(lanSeed: seed, engineSeed: seed &* 1000, lossy: true)
        let alphaName = try #require(lan.hosts[0].engine.registeredName(of: OperationID(1)))
        let betaName = try #require(lan.hosts[1].engine.registeredName(of: OperationID(1)))
        #expect(alphaName != betaName)
        #expect(Set([alphaName, betaName]) == [Fixture.instance("Shared Name"), Fixture.instance("Shared Name (2)")])
        #expect(lan.registrations(of: 0, OperationID(1)).last?.name == alphaName)
        #expect(lan.registrations(of: 1, OperationID(1)).last?.name == betaName)
        // The browser ends up knowing both instances (added, and not removed since).
        var present: Set<DNSName> = []
        for entry in lan.events(of: 2, OperationID(2)) {
            switch entry.event {
            case .instanceAdded(let name, _): present.insert(name)
            case .instanceRemoved(let name, _): present.remove(name)
            default: break
            }
        }
        #expect(present == [alphaName, betaName])
        let resolved = lan.events(of: 2, OperationID(3)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        #expect(resolved.last.map { !$0.addresses.isEmpty } == true)
    }
}
