import HeraldEngine
import HeraldWire
import Testing

@Suite("Probing (RFC 6762 §8.1)")
struct ProbingTests {
    let printer = Fixture.instance("Printer")

    @Test(
        "a service registered on a settled link waits a random 20–120 ms, then sends three probes 250 ms apart: the first QU, its unique records in Authority without the cache-flush bit"
    )
    func probeSchedule() throws {
        var firstDelays: [Int] = []
        for seed in UInt64(0)..<24 {
            var lan = SimulatedLAN(seed: seed)
            let alpha = lan.addHost("alpha", seed: seed &* 7919 &+ 3)
            lan.run(for: 2000)  // the host name settles first
            let start = lan.now
            lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
            lan.run(for: 3000)
            let probes = lan.probes(from: alpha, for: printer)
            try #require(probes.count == 3)
            firstDelays.append(probes[0].time - start)
            #expect(probes.gaps { Int($0.time.milliseconds) } == [250, 250])
            for (index, probe) in probes.enumerated() {
                #expect(probe.message.questions == [Fixture.question(printer, .any, qu: index == 0)])
                let proposed = probe.message.authorities
                #expect(Set(proposed.map(\.type)) == [.srv, .txt])
                #expect(proposed.allSatisfy { $0.name == printer && !$0.cacheFlush })
                #expect(probe.message.answers.isEmpty && probe.message.additionals.isEmpty)
            }
        }
        #expect(firstDelays.allSatisfy { (20...120).contains($0) }, "\(firstDelays)")
        #expect(Set(firstDelays).count >= 8, "the initial wait is random: \(firstDelays)")
    }

    @Test(
        "within two seconds of its link coming up or changing addresses, a registration waits §8.1's full 0–250 ms, as the host's own name does"
    )
    func fullWaitAfterLinkEvents() throws {
        var afterLinkUp: [Int] = []
        var afterAddressChange: [Int] = []
        var hostName: [Int] = []
        for seed in UInt64(0)..<40 {
            var lan = SimulatedLAN(seed: seed)
            let alpha = lan.addHost("alpha", seed: seed &* 7919 &+ 3)
            lan.run(for: 1500)
            hostName.append(Int(try #require(lan.probes(from: alpha, for: "alpha.local.").first).time.milliseconds))
            lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
            lan.run(for: 3000)
            afterLinkUp.append(
                try #require(lan.probes(from: alpha, for: printer).first).time - Instant(milliseconds: 1500))

            lan.setAddresses(
                of: alpha, on: SimulatedLAN.ipv4Link,
                to: [LinkAddress(.v4(IPv4Address(10, 0, 0, 77)), prefixLength: 24)])
            lan.run(for: 1900)
            let start = lan.now
            lan.with(alpha) { $0.register(OperationID(2), Fixture.service("Scanner"), at: $1) }
            lan.run(for: 3000)
            afterAddressChange.append(
                try #require(lan.probes(from: alpha, for: Fixture.instance("Scanner")).first).time - start)
        }
        for delays in [afterLinkUp, afterAddressChange, hostName] {
            #expect(delays.allSatisfy { (0...250).contains($0) }, "\(delays)")
            #expect(delays.contains { $0 > 150 } && delays.contains { $0 < 40 }, "the whole range is used: \(delays)")
        }
    }

    @Test(
        "an address change of the interface's other family, or a conflict that renames the host, also puts registrations back on the full 0–250 ms"
    )
    func fullWaitAfterOtherFamilyOrHostRename() throws {
        var afterIPv6Change: [Int] = []
        var afterHostRename: [Int] = []
        for seed in UInt64(0)..<40 {
            var lan = SimulatedLAN(seed: seed)
            lan.useIPv6 = true
            let alpha = lan.addHost("alpha", seed: seed &* 7919 &+ 3)
            lan.run(for: 3000)
            let v6 = LinkAddress(.v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 0x77)), prefixLength: 64)
            lan.setAddresses(of: alpha, on: SimulatedLAN.ipv6Link, to: [v6])
            lan.run(for: 1900)
            var start = lan.now
            lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
            lan.run(for: 3000)
            let onIPv4 = lan.wire.first { packet in
                guard packet.sender == alpha, packet.link == SimulatedLAN.ipv4Link, let message = packet.message else {
                    return false
                }
                return !message.isResponse && message.questions.contains { $0.name == printer }
            }
            afterIPv6Change.append(try #require(onIPv4).time - start)

            // Another host claims alpha.local. with other data and defends it: alpha becomes alpha-2, and a
            // registration made just after probes on the full schedule.
            lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { $0 == "alpha.local." })
            lan.inject(
                .response([Fixture.a("alpha.local.", IPv4Address(10, 0, 0, 99))]), from: SimulatedLAN.peer(1), after: 0)
            lan.run(for: 1000)
            try #require(lan.hosts[alpha].engine.hostLabel == "alpha-2")
            start = lan.now
            lan.with(alpha) { $0.register(OperationID(2), Fixture.service("Scanner"), at: $1) }
            lan.run(for: 3000)
            afterHostRename.append(
                try #require(lan.probes(from: alpha, for: Fixture.instance("Scanner")).first).time - start)
        }
        for delays in [afterIPv6Change, afterHostRename] {
            #expect(delays.allSatisfy { (0...250).contains($0) }, "\(delays)")
            #expect(delays.contains { $0 > 150 }, "the whole range is used: \(delays)")
        }
    }

    @Test("the host name is probed too, with its address records and no cache-flush bit")
    func hostNameProbes() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        let probes = lan.probes(from: alpha, for: "alpha.local.")
        try #require(probes.count == 3)
        #expect(probes[0].message.questions.first?.unicastResponse == true)
        let proposed = probes[0].message.authorities.filter { $0.name == "alpha.local." }
        #expect(proposed.map(\.data) == [.a(IPv4Address(10, 0, 0, 1))])
        #expect(probes.allSatisfy { $0.message.authorities.allSatisfy { !$0.cacheFlush } })
    }

    @Test("the first announcement goes out 250 ms after the third probe, and nothing is answered before it")
    func announceOnlyAfterProbing() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        // A peer asks for the service's SRV record while it is still being probed.
        lan.inject(.query([Fixture.question(printer, .srv)]), from: SimulatedLAN.peer(1), after: 300)
        lan.inject(.query([Fixture.question(printer, .any)]), from: SimulatedLAN.peer(1), after: 600)
        lan.run(for: 3000)
        let probes = lan.probes(from: alpha, for: printer)
        try #require(probes.count == 3)
        let responses = lan.packets(from: alpha).filter { packet in
            packet.message.isResponse && packet.message.answersAndAdditionals.contains { $0.name == printer }
        }
        let first = try #require(responses.first)
        #expect(first.time - probes[2].time == 250)
        #expect(first.destination == .multicast)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.time) == [first.time])
    }

    @Test("a conflicting answer that arrives before the first probe is sent is ignored (a stale record)")
    func conflictBeforeFirstProbeIgnored() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha") { $0.requestedProbeDelay = 200...250 }
        lan.run(for: 2000)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.inject(.response([Fixture.srv(printer)]), from: SimulatedLAN.peer(1), after: 50)
        lan.run(for: 3000)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [printer])
        #expect(lan.hosts[alpha].engine.statistics.conflicts == 0)
    }

    @Test("a conflicting answer between the first probe and the announcement makes the service take the next name")
    func conflictDuringProbing() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        // Any record with the probed name counts (RFC 6762 §8.1: the probe asked for type ANY), even a TXT; the
        // peer answers 100 ms after the first (QU) probe.
        let txt = ResourceRecord(name: printer, ttl: 4500, data: .txt(Fixture.txt(["x": nil])), cacheFlush: true)
        let peer = SimulatedLAN.peer(1)
        let name = printer
        lan.reactors.append { packet in
            guard let message = packet.message, !message.authorities.isEmpty,
                message.questions.contains(where: { $0.name == name && $0.unicastResponse })
            else { return [] }
            return [SimulatedLAN.Injection(bytes: DNSMessage.response([txt]).wire, source: peer, delay: 100)]
        }
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 4000)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [Fixture.instance("Printer (2)")])
        #expect(lan.multicastResponses(from: alpha, containing: printer).isEmpty)
    }
}
