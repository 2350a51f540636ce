import HeraldEngine
import HeraldWire
import Testing

@Suite("Probes, announcements and goodbyes of many publications share packets (RFC 6762 §6.4, §8.1, §8.3)")
struct AggregationTests {
    /// The most a message with several records may take over IPv4: an Ethernet frame, never fragmented (§17).
    /// (1500 bytes less 20 of IPv4 header and 8 of UDP header, written out so that the test does not take the limit
    /// from the code it checks.)
    static let sharedLimit = 1500 - 28

    /// True when a packet is within an Ethernet frame, or carries a single record (or a single probe).
    static func isUnfragmentedOrAlone(_ packet: SimulatedLAN.WirePacket) -> Bool {
        let limit = packet.link.family == .ipv6 ? 1500 - 48 : sharedLimit
        guard packet.bytes.count > limit, let message = packet.message else { return true }
        if message.isResponse {
            return message.answers.count + message.authorities.count + message.additionals.count == 1
        }
        return Set(message.questions.map(\.name)).count == 1
    }

    /// Packets sent at each instant, in order.
    func rounds<Packet>(_ packets: [(time: Instant, message: Packet)]) -> [[Packet]] {
        var result: [[Packet]] = []
        var last: Instant?
        for packet in packets {
            if packet.time == last {
                result[result.count - 1].append(packet.message)
            } else {
                result.append([packet.message])
            }
            last = packet.time
        }
        return result
    }

    /// Instances a browse on `host` holds at the end of its events.
    func browsed(_ lan: SimulatedLAN, on host: Int, _ operation: OperationID) -> Set<DNSName> {
        var present = Set<DNSName>()
        for entry in lan.events(of: host, operation) {
            switch entry.event {
            case .instanceAdded(let name, _): present.insert(name)
            case .instanceRemoved(let name, _): present.remove(name)
            default: break
            }
        }
        return present
    }

    /// The results a resolve on `host` delivered, in order.
    func resolutions(_ lan: SimulatedLAN, on host: Int, _ operation: OperationID) -> [ResolvedService] {
        lan.events(of: host, operation).compactMap { entry in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
    }

    func names(_ count: Int) -> [DNSName] {
        (1...count).map { Fixture.instance("Printer \($0)") }
    }

    /// Host 0 (`alpha`) publishes; host 1 (`beta`) browses IPP services with operation `browse`, both settled.
    func lanWithBrowser() -> SimulatedLAN {
        var lan = SimulatedLAN()
        _ = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(beta) { $0.browse(Self.browse, type: Fixture.ippType, at: $1) }
        lan.run(for: 2000)
        return lan
    }

    static let browse = OperationID(999)
    let alpha = 0, beta = 1

    /// Registers `Printer 1` … `Printer <count>` on alpha in one step.
    func registerPrinters(_ count: Int, on lan: inout SimulatedLAN, txt: TXTRecord = .empty) {
        lan.with(alpha) { engine, now in
            for n in 1...count {
                engine.register(
                    OperationID(UInt64(n)), Fixture.service("Printer \(n)", port: UInt16(1000 + n), txt: txt), at: now)
            }
        }
    }

    @Test("services registered within a quarter second probe together and announce together")
    func registrationsShareProbesAndAnnouncements() throws {
        var lan = lanWithBrowser()
        let start = lan.now
        // Forty at once, then twenty more, one every 5 ms.
        registerPrinters(40, on: &lan)
        for n in 41...60 {
            lan.run(for: 5)
            lan.with(alpha) {
                $0.register(OperationID(UInt64(n)), Fixture.service("Printer \(n)", port: UInt16(1000 + n)), at: $1)
            }
        }
        lan.run(for: 5000)
        let expected = Set(names(60))
        for n in 1...60 {
            #expect(
                lan.registrations(of: alpha, OperationID(UInt64(n))).map(\.name) == [Fixture.instance("Printer \(n)")])
        }
        #expect(browsed(lan, on: beta, Self.browse) == expected)

        // Three rounds of probes, each proposing every instance's records in a few packets; one at a time, they would
        // be 180 packets.
        let probes = lan.probes(from: alpha).filter { $0.time >= start }
        let probeRounds = rounds(probes)
        #expect(probeRounds.count == 3, "\(probes.map(\.time))")
        for round in probeRounds {
            #expect(round.count <= 4, "\(round.count) packets")
            #expect(Set(round.flatMap(\.questions).map(\.name)) == expected)
            #expect(Set(round.flatMap(\.authorities).filter { $0.type == .srv }.map(\.name)) == expected)
        }
        // The first probes ask for unicast replies for every name, the later ones for none (§8.1).
        #expect(probeRounds.first?.allSatisfy { $0.questions.allSatisfy(\.unicastResponse) } == true)
        #expect(probeRounds.dropFirst().joined().allSatisfy { $0.questions.allSatisfy { !$0.unicastResponse } })
        // Three rounds of announcements, each announcing all sixty in a few packets (they would be 180).
        let announcementRounds = rounds(lan.multicastResponses(from: alpha, type: .srv).filter { $0.time >= start })
        #expect(announcementRounds.count == MDNSConstants.announcementCount)
        for round in announcementRounds {
            #expect(round.count <= 5, "\(round.count) packets")
            #expect(Set(round.flatMap(\.answers).filter { $0.type == .srv }.map(\.name)) == expected)
            // The additional records come once for all: this host's address and the NSECs.
            #expect(round.flatMap(\.additionals).filter { $0.type == .a }.count == 1)
        }
        // No packet is fragmented.
        #expect(lan.wire.filter { $0.sender == alpha }.allSatisfy { $0.bytes.count <= Self.sharedLimit })
        // A quarter second after the first registration at most, the first probe went out.
        #expect(probes[0].time <= start + MDNSConstants.probeInitialDelayMax)
    }

    @Test("a burst too big for one message is split between probes, never inside one, and every packet fits the limit")
    func largeBurstIsSplitBetweenProbes() throws {
        var lan = lanWithBrowser()
        let start = lan.now
        registerPrinters(200, on: &lan, txt: Fixture.txt(["note": Array(repeating: UInt8(ascii: "x"), count: 200)]))
        lan.run(for: 6000)
        let expected = Set(names(200))
        #expect(browsed(lan, on: beta, Self.browse) == expected)
        let probes = lan.probes(from: alpha).filter { $0.time >= start }
        // 200 × about 270 bytes: five or so per packet, all at the same three times.
        #expect(probes.count > 3 && probes.count <= 3 * 50, "\(probes.count)")
        #expect(Set(probes.map(\.time)).count == 3)
        for probe in probes {
            // Each question's name has its SRV and TXT in the same message.
            for question in probe.message.questions {
                let types = Set(probe.message.authorities.filter { $0.name == question.name }.map(\.type))
                #expect(types == [.srv, .txt], "\(question.name)")
            }
        }
        for time in Set(probes.map(\.time)) {
            #expect(Set(probes.filter { $0.time == time }.flatMap(\.message.questions).map(\.name)) == expected)
        }
        let sent = lan.wire.filter { $0.sender == alpha && $0.time >= start }
        #expect(sent.allSatisfy { $0.bytes.count <= Self.sharedLimit }, "\(sent.map(\.bytes.count).max() ?? 0)")
        // The announcements also come in several packets, together naming every instance.
        let firstAnnouncement = lan.multicastResponses(from: alpha, type: .srv).filter { $0.time >= start }
        let announcedAt = try #require(firstAnnouncement.first?.time)
        let round = firstAnnouncement.filter { $0.time == announcedAt }
        #expect(round.count > 1 && round.count <= 60, "\(round.count)")
        #expect(Set(round.flatMap(\.message.answers).filter { $0.type == .srv }.map(\.name)) == expected)
    }

    @Test(
        "a record too big to share an Ethernet frame goes alone, in a datagram that may be fragmented; nothing else does"
    )
    func bigRecordGoesAlone() throws {
        var lan = lanWithBrowser()
        registerPrinters(10, on: &lan)
        let bigTXT = try TXTRecord(
            strings: (0..<12).map { Array("k\($0)=".utf8) + Array(repeating: UInt8(ascii: "v"), count: 240) })
        let big = Fixture.instance("Big")
        lan.with(alpha) { $0.register(OperationID(11), Fixture.service("Big", port: 4000, txt: bigTXT), at: $1) }
        lan.run(for: 6000)
        lan.with(beta) { $0.resolve(OperationID(12), instance: big, at: $1) }
        lan.run(for: 3000)
        #expect(browsed(lan, on: beta, Self.browse) == Set(names(10) + [big]))
        let resolved = resolutions(lan, on: beta, OperationID(12))
        #expect(resolved.last?.txt == bigTXT && resolved.last?.port == 4000, "\(resolved)")

        let sent = lan.wire.filter { $0.sender == alpha }
        #expect(
            sent.allSatisfy(Self.isUnfragmentedOrAlone),
            "\(sent.filter { !Self.isUnfragmentedOrAlone($0) }.map(\.message))")
        // The big TXT record was announced by itself, in a datagram larger than an Ethernet frame.
        let alone = sent.filter { $0.bytes.count > Self.sharedLimit && $0.message?.isResponse == true }
        #expect(alone.count >= MDNSConstants.announcementCount)
        #expect(
            alone.allSatisfy { $0.message?.answers.map(\.name) == [big] && $0.message?.answers.first?.type == .txt })
        // The other records of its announcements went out with the small services', in ordinary packets.
        let bigSRV = lan.multicastResponses(from: alpha).filter {
            $0.message.answers.contains { $0.name == big && $0.type == .srv }
        }
        #expect(bigSRV.count >= MDNSConstants.announcementCount)
    }

    @Test("a TXT record of the largest size registration accepts is announced and resolved, over IPv4 and IPv6")
    func txtAtTheRegistrationLimit() throws {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        // The limit apps are held to (AppSocketServer.fitsInOneMessage), in strings of at most 255 bytes.
        var remaining = MessageSizeLimit.default.largestServiceRecordData(type: Fixture.ippType)
        var strings: [[UInt8]] = []
        while remaining > 1 {
            let length = min(255, remaining - 1)
            strings.append(Array(repeating: UInt8(ascii: "t"), count: length))
            remaining -= length + 1
        }
        let txt = try TXTRecord(strings: strings)
        #expect(txt.rdata.count >= MessageSizeLimit.default.largestServiceRecordData(type: Fixture.ippType) - 1)
        let instance = Fixture.instance("Largest TXT")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Largest TXT", txt: txt), at: $1) }
        lan.run(for: 5000)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [instance])
        lan.with(beta) { $0.resolve(OperationID(2), instance: instance, at: $1) }
        lan.run(for: 3000)
        let resolved = resolutions(lan, on: beta, OperationID(2))
        #expect(Set(resolved.map(\.link.family)) == [.ipv4, .ipv6], "\(resolved.map(\.link))")
        #expect(resolved.allSatisfy { $0.txt == txt })
        #expect(lan.wire.filter { $0.sender == alpha }.allSatisfy(Self.isUnfragmentedOrAlone))
    }

    @Test("services withdrawn together say goodbye in a few packets, and a peer's browse loses every one at once")
    func withdrawalsShareGoodbyes() throws {
        var lan = lanWithBrowser()
        registerPrinters(150, on: &lan)
        lan.run(for: 10_000)
        #expect(browsed(lan, on: beta, Self.browse).count == 150)
        let cancelledAt = lan.now
        lan.with(alpha) { engine, now in for n in 1...150 { engine.cancel(OperationID(UInt64(n)), at: now) } }
        let goodbyes = lan.multicastResponses(from: alpha).filter { $0.time >= cancelledAt }
        // 150 × (SRV, TXT, PTR, NSEC) with TTL 0: a handful of packets, not 150, none of them fragmented.
        #expect(!goodbyes.isEmpty && goodbyes.count <= 12, "\(goodbyes.count)")
        #expect(
            lan.wire.filter { $0.sender == alpha && $0.time >= cancelledAt }.allSatisfy {
                $0.bytes.count <= Self.sharedLimit
            })
        #expect(goodbyes.allSatisfy { $0.time == cancelledAt && $0.message.answers.allSatisfy { $0.ttl == 0 } })
        let gone = Set(goodbyes.flatMap(\.message.answers).filter { $0.type == .srv }.map(\.name))
        #expect(gone == Set(names(150)))
        lan.run(for: 2000)
        #expect(browsed(lan, on: beta, Self.browse).isEmpty)
        #expect(
            lan.events(of: beta, Self.browse).filter {
                if case .instanceRemoved = $0.event { return $0.time <= cancelledAt + 1500 } else { return false }
            }.count == 150)
    }

    @Test("a record withdrawn and published again in one step is announced, not said goodbye to")
    func laterWordWins() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha") {
            $0.probeInitialDelay = 0...0
            $0.requestedProbeDelay = 0...0
        }
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let pointer = RecordRegistration(
            name: "_x._tcp.local.", type: .ptr, data: .ptr("one._x._tcp.local."), ttl: 4500,
            unique: false)
        lan.with(beta) { $0.query(OperationID(99), name: "_x._tcp.local.", type: .ptr, at: $1) }
        lan.with(alpha) { $0.registerRecord(OperationID(1), pointer, at: $1) }
        lan.run(for: 5000)
        #expect(lan.registrations(of: alpha, OperationID(1)).count == 1)

        // Withdrawn, then the same record published by another registration, before anything is sent.
        let replacedAt = lan.now
        lan.with(alpha) { engine, now in
            engine.cancel(OperationID(1), at: now)
            engine.registerRecord(OperationID(2), pointer, at: now)
            engine.advance(to: now)
        }
        #expect(lan.registrations(of: alpha, OperationID(2)).count == 1)
        let sentThen = lan.multicastResponses(from: alpha, containing: "_x._tcp.local.").filter {
            $0.time == replacedAt
        }
        #expect(sentThen.count == 1)
        #expect(sentThen.flatMap(\.message.answers).filter { $0.name == "_x._tcp.local." }.map(\.ttl) == [4500])
        lan.run(for: 5000)
        #expect(
            !lan.events(of: beta, OperationID(99)).contains {
                if case .recordRemoved = $0.event { return true } else { return false }
            }, "the peer never lost the record")

        // Withdrawn for good: the goodbye goes out, and the peer loses the record.
        let withdrawnAt = lan.now
        lan.with(alpha) { $0.cancel(OperationID(2), at: $1) }
        let sentLast = lan.multicastResponses(from: alpha, containing: "_x._tcp.local.").filter {
            $0.time == withdrawnAt
        }
        #expect(sentLast.flatMap(\.message.answers).filter { $0.name == "_x._tcp.local." }.map(\.ttl) == [0])
        lan.run(for: 2000)
        #expect(
            lan.events(of: beta, OperationID(99)).contains {
                if case .recordRemoved = $0.event { return $0.time > withdrawnAt } else { return false }
            })
    }

    @Test("a tie-break on one name of an aggregated probe renames that service only")
    func tieBreakInsideAggregatedProbe() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha") {
            $0.probeInitialDelay = 0...0
            $0.requestedProbeDelay = 0...0
        }
        let beta = lan.addHost("beta") {
            $0.probeInitialDelay = 0...0
            $0.requestedProbeDelay = 0...0
        }
        lan.run(for: 3000)
        let start = lan.now
        lan.with(alpha) { engine, now in
            for n in 1...10 {
                engine.register(OperationID(UInt64(n)), Fixture.service("Printer \(n)", port: 631), at: now)
            }
        }
        // beta proposes a later port for "Printer 5" at the same moment, so it wins the tie-break (§8.2).
        lan.with(beta) { $0.register(OperationID(1), Fixture.service("Printer 5", port: 9999), at: $1) }
        lan.run(for: 10_000)
        #expect(lan.registrations(of: beta, OperationID(1)).map(\.name) == [Fixture.instance("Printer 5")])
        for n in 1...10 where n != 5 {
            #expect(
                lan.registrations(of: alpha, OperationID(UInt64(n))).map(\.name) == [Fixture.instance("Printer \(n)")])
        }
        #expect(lan.registrations(of: alpha, OperationID(5)).map(\.name) == [Fixture.instance("Printer 5 (2)")])
        // The first probes really were simultaneous and aggregated: alpha's carried all ten names.
        let first = try #require(lan.probes(from: alpha).first { $0.time >= start })
        #expect(first.message.questions.count == 10)
        #expect(lan.probes(from: beta, for: Fixture.instance("Printer 5")).first?.time == first.time)
        // Only "Printer 5" lost the tie-break: the next rounds went on with the other nine, without it, and the nine
        // were announced on time (750 ms after their first probe), none of them held back by the loss.
        let printer5 = Fixture.instance("Printer 5")
        let laterRounds = rounds(lan.probes(from: alpha).filter { $0.time > start && $0.time < start + 750 })
        #expect(laterRounds.count == 2)
        for round in laterRounds {
            #expect(Set(round.flatMap(\.questions).map(\.name)) == Set(names(10)).subtracting([printer5]))
        }
        #expect(lan.probes(from: alpha, for: printer5).count == 1)
        for n in 1...10 where n != 5 {
            #expect(lan.registrations(of: alpha, OperationID(UInt64(n))).first?.time == start + 750)
        }
    }
}
