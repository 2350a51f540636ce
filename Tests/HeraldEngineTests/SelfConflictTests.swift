import HeraldEngine
import HeraldWire
import Testing

@Suite("A host never conflicts with itself (RFC 6762 §8.4, §9, §14)")
struct SelfConflictTests {
    let printer = Fixture.instance("Printer")

    @Test(
        "two registrations of one name on one host: the second takes the next free name, or fails without auto-rename")
    func sameNameTwiceOnOneHost() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Printer", port: 5001), at: $1)
            $0.register(OperationID(2), Fixture.service("printer", port: 5002), at: $1)  // names ignore ASCII case
            $0.register(OperationID(3), Fixture.service("Printer", port: 5003, autoRename: false), at: $1)
            $0.register(OperationID(4), Fixture.service("Printer (2)", port: 5004), at: $1)
        }
        lan.run(for: 10_000)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
        #expect(lan.registrations(of: alpha, OperationID(2)).map(\.name) == [Fixture.instance("printer (2)")])
        #expect(lan.events(of: alpha, OperationID(3)).map(\.event) == [.registrationFailed(.nameConflict)])
        // "(2)" reads as a rename suffix, so the next candidate is "(3)".
        #expect(lan.registrations(of: alpha, OperationID(4)).map(\.name) == [Fixture.instance("Printer (3)")])
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
        // On the wire, each name has one SRV record, with its own port; the failed registration sent nothing.
        let srvs = lan.packets(from: alpha).filter(\.message.isResponse).flatMap(\.message.answers).compactMap {
            record -> UInt16? in
            if case .srv(let srv) = record.data { return srv.port } else { return nil }
        }
        #expect(Set(srvs) == [5001, 5002, 5004], "\(srvs)")
        // A peer resolving the first name gets the first registration's port only.
        lan.with(beta) { $0.resolve(OperationID(9), instance: printer, at: $1) }
        lan.run(for: 2000)
        let ports = lan.events(of: beta, OperationID(9)).compactMap { entry -> UInt16? in
            if case .resolved(let service) = entry.event { return service.port } else { return nil }
        }
        #expect(!ports.isEmpty && Set(ports) == [5001], "\(ports)")
    }

    @Test("own records echoed back by a reflector, from another address but with identical data, are not a conflict")
    func reflectorEcho() throws {
        var lan = SimulatedLAN()
        lan.reactors.append(Fixture.reflector(of: 0))
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 10_000)
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
        #expect(lan.hosts[alpha].engine.hostLabel == "alpha")
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
        #expect(lan.probes(from: alpha, for: printer).count == 3)
        #expect(lan.probes(from: alpha, for: "alpha.local.").count == 3)
    }

    @Test(
        "a second interface on the same link hears the first one's records (directly and reflected) without a conflict")
    func secondInterfaceOnSameLink() throws {
        var lan = SimulatedLAN()
        lan.reactors.append(Fixture.reflector(of: 0))
        let alpha = lan.addHost("alpha")
        lan.addInterface(to: alpha, interfaceIndex: 2, address: .v4(IPv4Address(10, 0, 0, 11)))
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 8000)
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
        #expect(lan.hosts[alpha].engine.hostLabel == "alpha")
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
        // Each interface probed the name once (three probes each) and announced it.
        let interface2 = LinkID(interfaceIndex: 2, family: .ipv4)
        let probes = lan.wire.filter {
            $0.sender == alpha
                && $0.message.map { !$0.isResponse && $0.authorities.contains { $0.name == printer } } == true
        }
        #expect(probes.filter { $0.link == SimulatedLAN.ipv4Link }.count == 3)
        #expect(probes.filter { $0.link == interface2 }.count == 3)
        // The host name too: each interface proposes its own address, and neither takes the other's for a rival.
        let hostProbes = lan.wire.filter { packet in
            packet.sender == alpha
                && packet.message.map { !$0.isResponse && $0.questions.contains { $0.name == "alpha.local." } } == true
        }
        #expect(hostProbes.filter { $0.link == SimulatedLAN.ipv4Link }.count == 3)
        #expect(hostProbes.filter { $0.link == interface2 }.count == 3)
        // …all on the first schedule (0–250 ms, then 250 ms apart): no tie-break lost against itself.
        #expect(hostProbes.allSatisfy { $0.time.milliseconds <= 750 }, "\(hostProbes.map(\.time))")
        // A peer resolves the service to one of the host's addresses.
        lan.with(beta) { $0.resolve(OperationID(2), instance: printer, at: $1) }
        lan.run(for: 2000)
        let resolved = lan.events(of: beta, OperationID(2)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        let service = try #require(resolved.last)
        #expect(service.target == "alpha.local.")
        #expect(!service.addresses.isEmpty)
        #expect(Set(service.addresses).isSubset(of: [.v4(IPv4Address(10, 0, 0, 1)), .v4(IPv4Address(10, 0, 0, 11))]))
    }

    @Test("IPv6 address churn and an IPv4 address change are updates announced to peers, never conflicts or renames")
    func addressChurn() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        lan.with(beta) { $0.resolve(OperationID(2), instance: printer, interfaceIndex: nil, at: $1) }
        lan.run(for: 2000)
        let linkLocal = LinkAddress(.v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 1)), prefixLength: 64)
        for round in 1...6 {
            let global = LinkAddress(
                .v6(IPv6Address(high: 0x2001_0DB8_0000_0000, low: UInt64(round))), prefixLength: 64)
            lan.setAddresses(of: alpha, on: SimulatedLAN.ipv6Link, to: [linkLocal, global])
            lan.run(for: 700)
        }
        lan.setAddresses(
            of: alpha, on: SimulatedLAN.ipv4Link, to: [LinkAddress(.v4(IPv4Address(10, 0, 0, 77)), prefixLength: 24)])
        lan.run(for: 10_000)
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
        #expect(lan.hosts[beta].engine.statistics.conflicts == 0)
        #expect(lan.hosts[alpha].engine.hostLabel == "alpha")
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
        // The peer's resolve follows the addresses.
        let resolved = lan.events(of: beta, OperationID(2)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event, service.link == SimulatedLAN.ipv4Link {
                return service
            } else {
                return nil
            }
        }
        let service = try #require(resolved.last)
        #expect(
            Set(service.addresses) == [
                .v4(IPv4Address(10, 0, 0, 77)), linkLocal.address,
                .v6(IPv6Address(high: 0x2001_0DB8_0000_0000, low: 6)),
            ])
    }

    @Test("an address change while a reflector echoes everything still never renames")
    func addressChangeWithReflector() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        lan.reactors.append(Fixture.reflector(of: 0))
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        for round in 1...4 {
            let global = LinkAddress(
                .v6(IPv6Address(high: 0x2001_0DB8_0000_0000, low: UInt64(round))), prefixLength: 64)
            lan.setAddresses(
                of: alpha, on: SimulatedLAN.ipv6Link,
                to: [LinkAddress(.v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 1)), prefixLength: 64), global])
            lan.run(for: 1500)
        }
        lan.run(for: 10_000)
        #expect(lan.hosts[alpha].engine.hostLabel == "alpha")
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
    }
}
