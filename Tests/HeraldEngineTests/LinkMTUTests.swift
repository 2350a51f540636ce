import HeraldEngine
import HeraldWire
import Testing

@Suite("Messages with several records fit the link's own MTU (RFC 6762 §17)")
struct LinkMTUTests {
    let alpha = 0, beta = 1
    static let browse = OperationID(999)

    /// Bytes of IP and UDP headers, written out rather than taken from the code under test.
    static func headers(_ family: IPFamily) -> Int { family == .ipv6 ? 40 + 8 : 20 + 8 }

    /// Alpha and beta on IPv4 and IPv6, each link's MTU set as given, beta browsing IPP services.
    func lan(alphaMTU: Int, betaMTU: Int, configure: (inout EngineConfiguration) -> Void = { _ in }) -> SimulatedLAN {
        var lan = SimulatedLAN()
        lan.useIPv6 = true
        for (name, mtu) in [("alpha", alphaMTU), ("beta", betaMTU)] {
            let host = lan.addHost(name, configure: configure)
            lan.with(host) { engine, _ in
                engine.updateMTU(SimulatedLAN.ipv4Link, mtu: mtu)
                engine.updateMTU(SimulatedLAN.ipv6Link, mtu: mtu)
            }
        }
        lan.run(for: 3000)
        lan.with(beta) { $0.browse(Self.browse, type: Fixture.ippType, at: $1) }
        lan.run(for: 2000)
        return lan
    }

    /// Registers `Printer 1` … `Printer <count>` on alpha in one step, each with a 200-byte TXT record.
    func registerPrinters(_ count: Int, on lan: inout SimulatedLAN, from first: Int = 1) {
        let txt = Fixture.txt(["note": Array(repeating: UInt8(ascii: "x"), count: 200)])
        lan.with(alpha) { engine, now in
            for n in first..<(first + count) {
                engine.register(
                    OperationID(UInt64(n)), Fixture.service("Printer \(n)", port: UInt16(1000 + n), txt: txt), at: now)
            }
        }
    }

    /// A LAN where alpha has registered `count` printers and beta has found them all; also when they were registered.
    func lanWithPrinters(
        _ count: Int, alphaMTU: Int, betaMTU: Int,
        configure: (inout EngineConfiguration) -> Void = { _ in }
    ) -> (SimulatedLAN, start: Instant) {
        var lan = lan(alphaMTU: alphaMTU, betaMTU: betaMTU, configure: configure)
        let start = lan.now
        registerPrinters(count, on: &lan)
        lan.run(for: 8000)
        #expect(browsed(lan) == names(1...count))
        return (lan, start)
    }

    func browsed(_ lan: SimulatedLAN) -> Set<DNSName> {
        var present = Set<DNSName>()
        for entry in lan.events(of: beta, Self.browse) {
            switch entry.event {
            case .instanceAdded(let name, _): present.insert(name)
            case .instanceRemoved(let name, _): present.remove(name)
            default: break
            }
        }
        return present
    }

    func names(_ range: ClosedRange<Int>) -> Set<DNSName> { Set(range.map { Fixture.instance("Printer \($0)") }) }

    /// The largest datagram (IP and UDP headers included) a host sent on each family since `start`.
    func largestDatagrams(_ lan: SimulatedLAN, from host: Int, since start: Instant) -> [IPFamily: Int] {
        var largest: [IPFamily: Int] = [:]
        for packet in lan.wire where packet.sender == host && packet.time >= start {
            let size = packet.bytes.count + Self.headers(packet.link.family)
            largest[packet.link.family] = max(largest[packet.link.family] ?? 0, size)
        }
        return largest
    }

    @Test("on links with a 1280-byte MTU every packet fits 1280 bytes, and is filled close to it")
    func smallMTU() {
        let (lan, start) = lanWithPrinters(60, alphaMTU: 1280, betaMTU: 1280)
        for host in [alpha, beta] {
            let largest = largestDatagrams(lan, from: host, since: start)
            // Both families were used, and nothing passed the MTU; no record here is big enough to go alone.
            #expect(largest.keys.sorted() == [.ipv4, .ipv6])
            for (family, size) in largest { #expect(size <= 1280, "\(family): \(size) bytes") }
        }
        // Sixty probes of about 290 bytes: the packets were filled to the MTU, not to some smaller size.
        let alphaLargest = largestDatagrams(lan, from: alpha, since: start)
        #expect(alphaLargest[.ipv4, default: 0] > 1280 - 300)
        // Beta's browse query lists sixty known answers: more than a 1280-byte packet holds, so it is split with TC.
        let queries = lan.queries(from: beta).filter { $0.time > start + 3000 }
        #expect(queries.contains { $0.message.flags.isTruncated && $0.message.answers.count > 10 })
    }

    @Test("on links with jumbo frames, packets hold more than an Ethernet frame, up to the MTU and the limit")
    func jumboFrames() {
        let (lan, start) = lanWithPrinters(60, alphaMTU: 9000, betaMTU: 9000)
        // Sixty probes (about 17 KB) take two or three packets a round instead of the twelve a 1500-byte link needs.
        for family in IPFamily.allCases {
            let probes = lan.wire.filter { packet in
                guard packet.sender == alpha, packet.time >= start, packet.link.family == family,
                    let message = packet.message
                else { return false }
                return !message.isResponse && !message.authorities.isEmpty
            }
            #expect(Set(probes.map(\.time)).count == 3, "\(family)")
            #expect(probes.count <= 3 * 3, "\(family): \(probes.count) probe packets")
        }
        for (family, size) in largestDatagrams(lan, from: alpha, since: start) {
            #expect(size > 1500 && size <= 9000, "\(family): \(size) bytes")
        }
        // Beta's known answers all go in one query.
        let queries = lan.queries(from: beta).filter { $0.time > start + 3000 && $0.message.answers.count > 0 }
        #expect(!queries.isEmpty)
        #expect(queries.allSatisfy { !$0.message.flags.isTruncated && $0.message.answers.count == 60 })
    }

    @Test("the configured limit still bounds packets on links whose MTU is larger")
    func limitBelowMTU() {
        let (lan, start) = lanWithPrinters(60, alphaMTU: 9000, betaMTU: 9000) {
            $0.messageSizeLimit = MessageSizeLimit(datagramSize: 4000)
        }
        for (family, size) in largestDatagrams(lan, from: alpha, since: start) {
            #expect(size > 1500 && size <= 4000, "\(family): \(size) bytes")
        }
    }

    @Test("an MTU that changes while the link is in use bounds the packets sent after the change")
    func mtuChanges() {
        var (lan, _) = lanWithPrinters(60, alphaMTU: 9000, betaMTU: 9000)
        let change = lan.now
        lan.with(alpha) { engine, _ in
            engine.updateMTU(SimulatedLAN.ipv4Link, mtu: 1280)
            engine.updateMTU(SimulatedLAN.ipv6Link, mtu: 1280)
        }
        // Sixty more, then all withdrawn: probes, announcements and goodbyes after the change.
        registerPrinters(60, on: &lan, from: 61)
        lan.run(for: 8000)
        #expect(browsed(lan) == names(1...120))
        lan.with(alpha) { engine, now in
            for n in 1...120 { engine.cancel(OperationID(UInt64(n)), at: now) }
        }
        lan.run(for: 3000)
        #expect(browsed(lan).isEmpty)
        for (family, size) in largestDatagrams(lan, from: alpha, since: change) {
            #expect(size <= 1280, "\(family): \(size) bytes")
        }
    }

    @Test("an MTU below 576 bytes is taken as 576, and every service is still found")
    func tinyMTU() {
        let (lan, start) = lanWithPrinters(20, alphaMTU: 200, betaMTU: 1500)
        for (family, size) in largestDatagrams(lan, from: alpha, since: start) {
            #expect(size > 400 && size <= 576, "\(family): \(size) bytes")
        }
    }
}
