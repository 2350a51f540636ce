import HeraldEngine
import HeraldWire
import Testing

@Suite("Reporting a registration")
struct RegistrationReportTests {
    @Test("a service on IPv4 and IPv6 is reported registered only after it is announced on both", arguments: 1...8)
    func registeredAfterEveryLinkAnnounced(seed: UInt64) throws {
        var lan = SimulatedLAN(seed: seed)
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha", seed: seed * 31)
        let registration = ServiceRegistration(instance: "Both Families", type: "_http._tcp.local.", port: 80)
        lan.with(alpha) { $0.register(OperationID(1), registration, at: $1) }
        lan.run(for: 3000)
        let reported = try #require(
            lan.events(of: alpha, OperationID(1)).first { entry in
                if case .registered = entry.event { return true } else { return false }
            })
        // The first unsolicited response carrying the service's SRV record, per link.
        var firstAnnouncement: [LinkID: Instant] = [:]
        for packet in lan.wire where packet.sender == alpha {
            guard let message = packet.message, message.isResponse,
                message.answers.contains(where: { $0.type == .srv && $0.ttl > 0 })
            else { continue }
            if firstAnnouncement[packet.link] == nil { firstAnnouncement[packet.link] = packet.time }
        }
        #expect(firstAnnouncement.count == 2)
        for (_, time) in firstAnnouncement { #expect(reported.time >= time) }
    }
}
