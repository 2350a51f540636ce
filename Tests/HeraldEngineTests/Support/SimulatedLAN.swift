import HeraldEngine
import HeraldWire

/// Several engines on one virtual link with a shared virtual clock: packets one engine multicasts reach
/// every other engine after `latency` milliseconds, unicast ones reach their addressee. Loss, duplication
/// and reordering come from a seeded generator, so every run of a scenario is the same.
struct SimulatedLAN {
    struct Host {
        var name: String
        var engine: MDNSEngine
        var ipv4: IPv4Address
        var ipv6: IPv6Address
        /// Every event delivered to this host's operations, with the time it was delivered.
        var events: [(time: Instant, operation: OperationID, event: OperationEvent)] = []
    }

    /// A packet seen on the wire.
    struct WirePacket {
        var time: Instant
        var sender: Int
        var link: LinkID
        var destination: PacketDestination
        var bytes: [UInt8]
        var message: DNSMessage? { try? DNSMessage(parsing: bytes) }
    }

    private struct InFlight {
        var deliverAt: Instant
        var sequence: Int
        var receiver: Int
        var source: SocketAddress
        var link: LinkID
        var toUnicast: Bool
        var bytes: [UInt8]
    }

    static let interfaceIndex = 1
    static let ipv4Link = LinkID(interfaceIndex: interfaceIndex, family: .ipv4)
    static let ipv6Link = LinkID(interfaceIndex: interfaceIndex, family: .ipv6)

    var hosts: [Host] = []
    var now = Instant.zero
    var latency = 1
    var lossPercent = 0
    var duplicatePercent = 0
    var reorderJitter = 0
    var useIPv6 = false
    /// Every packet any engine sent, in order.
    var wire: [WirePacket] = []
    /// Packets scripted peers sent; peers are addressed by index -1 - n.
    private var inFlight: [InFlight] = []
    private var sequence = 0
    private var random: EngineRandom

    init(seed: UInt64 = 1) {
        random = EngineRandom(seed: seed)
    }

    /// Adds a host whose engine uses `hostName` and the addresses 10.0.0.n / fe80::n.
    @discardableResult
    mutating func addHost(_ hostName: String, seed: UInt64? = nil, configure: (inout EngineConfiguration) -> Void = { _ in })
        -> Int
    {
        let index = hosts.count
        var configuration = EngineConfiguration(hostName: hostName, seed: seed ?? UInt64(index + 100))
        configure(&configuration)
        var host = Host(name: hostName, engine: MDNSEngine(configuration: configuration),
                        ipv4: IPv4Address(10, 0, 0, UInt8(index + 1)),
                        ipv6: IPv6Address(high: 0xFE80_0000_0000_0000, low: UInt64(index + 1)))
        host.engine.addLink(Self.ipv4Link, addresses: [LinkAddress(.v4(host.ipv4), prefixLength: 24)], at: now)
        if useIPv6 {
            host.engine.addLink(Self.ipv6Link, addresses: [LinkAddress(.v6(host.ipv6), prefixLength: 64)], at: now)
        }
        hosts.append(host)
        collect(from: index)
        return index
    }

    /// Lets a host's engine act on something, then collects what it sent and delivered.
    mutating func with(_ index: Int, _ body: (inout MDNSEngine, Instant) -> Void) {
        body(&hosts[index].engine, now)
        collect(from: index)
    }

    /// Sends a crafted packet from a scripted peer (not an engine) to every host, or to one.
    mutating func inject(_ bytes: [UInt8], from source: SocketAddress, link: LinkID = Self.ipv4Link, to receiver: Int? = nil,
                         toUnicast: Bool = false) {
        let receivers = receiver.map { [$0] } ?? Array(hosts.indices)
        for index in receivers {
            inFlight.append(InFlight(deliverAt: now + latency, sequence: nextSequence(), receiver: index, source: source,
                                     link: link, toUnicast: toUnicast, bytes: bytes))
        }
    }

    /// Runs the LAN until `deadline`, handling every timer and delivery in time order.
    mutating func run(until deadline: Instant) {
        while true {
            let nextDelivery = inFlight.map(\.deliverAt).min()
            let nextTimer = hosts.indices.compactMap { hosts[$0].engine.nextDeadline }.min()
            guard let next = [nextDelivery, nextTimer].compactMap({ $0 }).min(), next <= deadline else { break }
            now = max(now, next)
            // Deliveries first, in send order, then timers.
            let due = inFlight.filter { $0.deliverAt <= now }.sorted { ($0.deliverAt, $0.sequence) < ($1.deliverAt, $1.sequence) }
            inFlight.removeAll { $0.deliverAt <= now }
            for packet in due {
                hosts[packet.receiver].engine.receive(packet.bytes, from: packet.source, on: packet.link,
                                                      toUnicast: packet.toUnicast, at: now)
                collect(from: packet.receiver)
            }
            for index in hosts.indices where (hosts[index].engine.nextDeadline.map { $0 <= now } ?? false) {
                hosts[index].engine.advance(to: now)
                collect(from: index)
            }
        }
        now = max(now, deadline)
    }

    /// Runs for `milliseconds` more.
    mutating func run(for milliseconds: Int) { run(until: now + milliseconds) }

    private mutating func nextSequence() -> Int {
        sequence += 1
        return sequence
    }

    private mutating func collect(from index: Int) {
        for action in hosts[index].engine.takeActions() {
            switch action {
            case .deliver(let operation, let event):
                hosts[index].events.append((now, operation, event))
            case .send(let packet):
                wire.append(WirePacket(time: now, sender: index, link: packet.link, destination: packet.destination,
                                       bytes: packet.bytes))
                let source: SocketAddress = packet.link.family == .ipv4
                    ? SocketAddress(.v4(hosts[index].ipv4), port: 5353)
                    : SocketAddress(.v6(hosts[index].ipv6), port: 5353)
                for receiver in receivers(of: packet, from: index) {
                    if Int.random(in: 0..<100, using: &random) < lossPercent { continue }
                    let copies = Int.random(in: 0..<100, using: &random) < duplicatePercent ? 2 : 1
                    for _ in 0..<copies {
                        let jitter = reorderJitter > 0 ? Int.random(in: 0...reorderJitter, using: &random) : 0
                        inFlight.append(InFlight(deliverAt: now + latency + jitter, sequence: nextSequence(), receiver: receiver,
                                                 source: source, link: packet.link,
                                                 toUnicast: packet.destination != .multicast, bytes: packet.bytes))
                    }
                }
            }
        }
    }

    private func receivers(of packet: OutgoingPacket, from sender: Int) -> [Int] {
        switch packet.destination {
        case .multicast:
            return hosts.indices.filter { $0 != sender }
        case .unicast(let address):
            return hosts.indices.filter { index in
                index != sender && (address.address == .v4(hosts[index].ipv4) || address.address == .v6(hosts[index].ipv6))
            }
        }
    }

    // MARK: - Reading what happened

    /// Events delivered to one operation of a host.
    func events(of host: Int, _ operation: OperationID) -> [(time: Instant, event: OperationEvent)] {
        hosts[host].events.filter { $0.operation == operation }.map { ($0.time, $0.event) }
    }

    /// Packets a host sent, decoded.
    func packets(from host: Int) -> [(time: Instant, message: DNSMessage, destination: PacketDestination)] {
        wire.filter { $0.sender == host }.compactMap { packet in packet.message.map { (packet.time, $0, packet.destination) } }
    }
}
