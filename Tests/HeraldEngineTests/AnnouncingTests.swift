import HeraldEngine
import HeraldWire
import Testing

@Suite("Announcing and updating (RFC 6762 §8.3, §8.4, §10)")
struct AnnouncingTests {
    let printer = Fixture.instance("Printer")

    @Test(
        "a service is announced at least twice, the intervals at least doubling from one second, and never again unasked"
    )
    func announcementSchedule() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 60_000)
        let announcements = lan.multicastResponses(from: alpha, containing: printer, type: .srv)
        try #require(announcements.count >= 2)
        let gaps = announcements.gaps { Int($0.time.milliseconds) }
        #expect(gaps[0] >= 1000)
        for (previous, next) in zip(gaps, gaps.dropFirst()) { #expect(next >= 2 * previous) }
        #expect(announcements.count <= 8)
        // All of them within the first few seconds: no periodic announcements (RFC 6762 §8.3).
        #expect(announcements.last!.time - announcements.first!.time < 10_000)
    }

    @Test(
        "a service limited to one IP family (an Avahi file's protocol attribute) is probed and announced on that family's links only"
    )
    func familyLimitedService() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        var v4Only = Fixture.service("Printer")
        v4Only.family = .ipv4
        lan.with(alpha) { $0.register(OperationID(1), v4Only, at: $1) }
        lan.run(for: 10_000)
        let carrying = lan.wire.filter { packet in
            packet.sender == alpha
                && (packet.message.map { message in
                    (message.answers + message.authorities).contains { $0.name == printer }
                } ?? false)
        }
        #expect(carrying.contains { $0.link == SimulatedLAN.ipv4Link })
        #expect(!carrying.contains { $0.link == SimulatedLAN.ipv6Link }, "\(carrying.map(\.link))")
        #expect(lan.registrations(of: alpha, OperationID(1)).count == 1)
    }

    @Test("announcements carry the cache-flush bit on unique records only")
    func cacheFlushOnUniqueOnly() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha")
        let registration = ServiceRegistration(
            instance: "Printer", type: Fixture.ippType, subtypes: ["_universal"], port: 631,
            txt: Fixture.txt(["rp": Array("ipp".utf8)]))
        lan.with(alpha) { $0.register(OperationID(1), registration, at: $1) }
        lan.run(for: 5000)
        let records = lan.multicastResponses(from: alpha).flatMap(\.message.answers)
        let unique: Set<RecordType> = [.srv, .txt, .a, .aaaa]
        for record in records {
            let isReversePTR =
                record.type == .ptr && (record.name.hasSuffix("in-addr.arpa.") || record.name.hasSuffix("ip6.arpa."))
            let shouldFlush = unique.contains(record.type) || isReversePTR
            #expect(record.cacheFlush == shouldFlush, "\(record)")
        }
        let types = Set(records.map(\.name))
        #expect(
            types.isSuperset(of: [
                printer, Fixture.ippType, Fixture.serviceTypes, "_universal._sub._ipp._tcp.local.",
                "alpha.local.",
            ]))
    }

    @Test("TTLs are 120 s for SRV, A, AAAA and reverse PTR records and 4500 s for the others")
    func recordTTLs() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha")
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Printer", txt: Fixture.txt(["a": nil])), at: $1)
        }
        lan.run(for: 5000)
        let records = lan.multicastResponses(from: alpha).flatMap(\.message.answers)
        var seen: Set<String> = []
        for record in records {
            let isReverse = record.name.hasSuffix("in-addr.arpa.") || record.name.hasSuffix("ip6.arpa.")
            switch record.type {
            case .srv, .a, .aaaa:
                #expect(record.ttl == 120, "\(record)")
                seen.insert(record.type.description)
            case .ptr where isReverse:
                #expect(record.ttl == 120, "\(record)")
                seen.insert("reverse PTR")
            case .ptr, .txt:
                #expect(record.ttl == 4500, "\(record)")
                seen.insert(record.type.description)
            default:
                break
            }
        }
        #expect(seen == ["SRV", "A", "AAAA", "reverse PTR", "PTR", "TXT"])
    }

    @Test("a TXT update is announced again at once, without probing, and a peer's resolve reports the new data")
    func txtUpdate() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Printer", txt: Fixture.txt(["v": Array("1".utf8)])), at: $1)
        }
        lan.run(for: 5000)
        lan.with(beta) { $0.resolve(OperationID(2), instance: printer, at: $1) }
        lan.run(for: 2000)
        let updatedAt = lan.now
        let newTXT = Fixture.txt(["v": Array("2".utf8)])
        lan.with(alpha) { $0.updateTXT(OperationID(1), txt: newTXT, at: $1) }
        lan.run(for: 10_000)
        let announcements = lan.multicastResponses(from: alpha, containing: printer, type: .txt).filter {
            $0.time >= updatedAt
        }
        try #require(announcements.count >= 2)
        #expect(announcements[0].time - updatedAt <= 10)
        #expect(announcements.gaps { Int($0.time.milliseconds) }.first.map { $0 >= 1000 } == true)
        for announcement in announcements {
            let txt = announcement.message.answers.filter { $0.type == .txt && $0.name == printer }
            #expect(txt.map(\.data) == [.txt(newTXT)])
            #expect(txt.allSatisfy { $0.cacheFlush })
        }
        #expect(lan.probes(from: alpha, for: printer).filter { $0.time >= updatedAt }.isEmpty)
        let resolved = lan.events(of: beta, OperationID(2)).compactMap { entry -> (Instant, ResolvedService)? in
            if case .resolved(let service) = entry.event { return (entry.time, service) } else { return nil }
        }
        let last = try #require(resolved.last)
        #expect(last.1.txt == newTXT)
        #expect(last.0 - updatedAt <= 10)
    }
}
