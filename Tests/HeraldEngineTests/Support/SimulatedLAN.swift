import HeraldEngine
import HeraldWire

/// Several engines on one virtual network segment with a shared virtual clock: packets one engine multicasts
/// reach every other attachment of the same IP family after `latency` milliseconds, unicast ones reach
/// their addressee. A host may attach more than one interface to the segment. Loss, duplication and
/// reordering come from a seeded generator, so every run of a scenario is the same.
///
/// Scripted peers are not engines: they speak through ``inject(_:from:link:to:toUnicast:after:)`` and
/// through reactors, closures that see every packet on the wire and may answer it.
struct SimulatedLAN {
    /// One interface of a host on the segment: the engine's link and the address packets leave from.
    struct Attachment {
        var link: LinkID
        var address: IPAddress
    }

    struct Host {
        var name: String
        var engine: MDNSEngine
        var attachments: [Attachment]
        /// Every event delivered to this host's operations, with the time it was delivered.
        var events: [(time: Instant, operation: OperationID, event: OperationEvent)] = []

        var ipv4: IPv4Address {
            for attachment in attachments { if case .v4(let v4) = attachment.address { return v4 } }
            return IPv4Address(0)
        }
    }

    /// A packet seen on the wire.
    struct WirePacket {
        var time: Instant
        var sender: Int
        var link: LinkID
        var source: SocketAddress
        var destination: PacketDestination
        var bytes: [UInt8]
        var message: DNSMessage? { try? DNSMessage(parsing: bytes) }
    }

    /// A packet a scripted peer sends.
    struct Injection {
        var bytes: [UInt8]
        var source: SocketAddress
        /// Milliseconds after the packet that provoked it (or after now) before it is sent.
        var delay = 0
        var family: IPFamily = .ipv4
        /// Only this host receives it (nil: every host on the segment).
        var receiver: Int? = nil
        var toUnicast = false
    }

    private struct InFlight {
        var deliverAt: Instant
        var sequence: Int
        var receiver: Int
        var link: LinkID
        var source: SocketAddress
        var toUnicast: Bool
        var bytes: [UInt8]
    }

    static let interfaceIndex = 1
    static let ipv4Link = LinkID(interfaceIndex: interfaceIndex, family: .ipv4)
    static let ipv6Link = LinkID(interfaceIndex: interfaceIndex, family: .ipv6)

    /// The address of scripted peer `n` (10.0.0.200 + n), sending from port 5353 unless told otherwise.
    static func peer(_ n: Int, port: UInt16 = 5353) -> SocketAddress {
        SocketAddress(.v4(IPv4Address(10, 0, 0, UInt8(200 + n))), port: port)
    }

    var hosts: [Host] = []
    var now = Instant.zero
    var latency = 1
    var lossPercent = 0
    var duplicatePercent = 0
    var reorderJitter = 0
    var useIPv6 = false
    /// Every packet any engine sent, in order.
    var wire: [WirePacket] = []
    /// Scripted peers: each sees every packet an engine sends and returns what to inject in reply.
    var reactors: [(WirePacket) -> [Injection]] = []
    private var inFlight: [InFlight] = []
    private var sequence = 0
    private var random: EngineRandom

    init(seed: UInt64 = 1) {
        random = EngineRandom(seed: seed)
    }

    /// Adds a host whose engine uses `hostName` and the addresses 10.0.0.n / fe80::n on interface 1.
    @discardableResult
    mutating func addHost(
        _ hostName: String, seed: UInt64? = nil, configure: (inout EngineConfiguration) -> Void = { _ in }
    )
        -> Int
    {
        let index = hosts.count
        var configuration = EngineConfiguration(hostName: hostName, seed: seed ?? UInt64(index + 100))
        configure(&configuration)
        var host = Host(name: hostName, engine: MDNSEngine(configuration: configuration), attachments: [])
        let v4 = IPAddress.v4(IPv4Address(10, 0, 0, UInt8(index + 1)))
        host.attachments.append(Attachment(link: Self.ipv4Link, address: v4))
        host.engine.addLink(Self.ipv4Link, addresses: [LinkAddress(v4, prefixLength: 24)], at: now)
        if useIPv6 {
            let v6 = IPAddress.v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: UInt64(index + 1)))
            host.attachments.append(Attachment(link: Self.ipv6Link, address: v6))
            host.engine.addLink(Self.ipv6Link, addresses: [LinkAddress(v6, prefixLength: 64)], at: now)
        }
        hosts.append(host)
        collect(from: index)
        return index
    }

    /// Plugs another interface of `host` into the same segment (a second NIC on the same LAN).
    mutating func addInterface(to host: Int, interfaceIndex: Int, address: IPAddress, prefixLength: Int = 24) {
        let link = LinkID(interfaceIndex: interfaceIndex, family: address.family)
        hosts[host].attachments.append(Attachment(link: link, address: address))
        hosts[host].engine.addLink(link, addresses: [LinkAddress(address, prefixLength: prefixLength)], at: now)
        collect(from: host)
    }

    /// Gives a host's link new addresses (the first one becomes the source of what it sends there).
    mutating func setAddresses(of host: Int, on link: LinkID, to addresses: [LinkAddress]) {
        if let index = hosts[host].attachments.firstIndex(where: { $0.link == link }), let first = addresses.first {
            hosts[host].attachments[index].address = first.address
        }
        hosts[host].engine.updateAddresses(link, addresses: addresses, at: now)
        collect(from: host)
    }

    /// Takes a host's link away.
    mutating func removeLink(of host: Int, _ link: LinkID) {
        hosts[host].engine.removeLink(link, at: now)
        collect(from: host)  // its goodbyes still leave through the interface
        hosts[host].attachments.removeAll { $0.link == link }
    }

    /// Lets a host's engine act on something, then collects what it sent and delivered.
    mutating func with(_ index: Int, _ body: (inout MDNSEngine, Instant) -> Void) {
        body(&hosts[index].engine, now)
        collect(from: index)
    }

    /// Sends a crafted packet from a scripted peer (not an engine) to every host on the segment, or to one.
    mutating func inject(
        _ bytes: [UInt8], from source: SocketAddress, link: LinkID = Self.ipv4Link, to receiver: Int? = nil,
        toUnicast: Bool = false, after delay: Int = 0
    ) {
        schedule(
            Injection(
                bytes: bytes, source: source, delay: delay, family: link.family, receiver: receiver,
                toUnicast: toUnicast))
    }

    /// Sends a crafted message from a scripted peer.
    mutating func inject(
        _ message: DNSMessage, from source: SocketAddress, to receiver: Int? = nil, toUnicast: Bool = false,
        after delay: Int = 0
    ) {
        inject(message.wire, from: source, to: receiver, toUnicast: toUnicast, after: delay)
    }

    private mutating func schedule(_ injection: Injection) {
        let receivers = injection.receiver.map { [$0] } ?? Array(hosts.indices)
        for index in receivers {
            for attachment in hosts[index].attachments where attachment.link.family == injection.family {
                inFlight.append(
                    InFlight(
                        deliverAt: now + injection.delay + latency, sequence: nextSequence(), receiver: index,
                        link: attachment.link, source: injection.source, toUnicast: injection.toUnicast,
                        bytes: injection.bytes))
            }
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
            let due = inFlight.filter { $0.deliverAt <= now }.sorted {
                ($0.deliverAt, $0.sequence) < ($1.deliverAt, $1.sequence)
            }
            inFlight.removeAll { $0.deliverAt <= now }
            for packet in due {
                hosts[packet.receiver].engine.receive(
                    packet.bytes, from: packet.source, on: packet.link,
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
                let address =
                    hosts[index].attachments.first { $0.link == packet.link }?.address
                    ?? hosts[index].attachments.first { $0.link.family == packet.link.family }!.address
                let source = SocketAddress(address, port: 5353)
                let sent = WirePacket(
                    time: now, sender: index, link: packet.link, source: source,
                    destination: packet.destination, bytes: packet.bytes)
                wire.append(sent)
                for (receiver, link) in receivers(of: packet, from: index) {
                    if Int.random(in: 0..<100, using: &random) < lossPercent { continue }
                    let copies = Int.random(in: 0..<100, using: &random) < duplicatePercent ? 2 : 1
                    for _ in 0..<copies {
                        let jitter = reorderJitter > 0 ? Int.random(in: 0...reorderJitter, using: &random) : 0
                        inFlight.append(
                            InFlight(
                                deliverAt: now + latency + jitter, sequence: nextSequence(), receiver: receiver,
                                link: link, source: source, toUnicast: packet.destination != .multicast,
                                bytes: packet.bytes))
                    }
                }
                for reactor in reactors {
                    for injection in reactor(sent) { schedule(injection) }
                }
            }
        }
    }

    /// Every attachment (host, link) that hears a packet: all others of its family for multicast (the sender's
    /// other interfaces included), the addressee for unicast.
    private func receivers(of packet: OutgoingPacket, from sender: Int) -> [(Int, LinkID)] {
        var result: [(Int, LinkID)] = []
        for index in hosts.indices {
            for attachment in hosts[index].attachments where attachment.link.family == packet.link.family {
                if index == sender && attachment.link == packet.link { continue }
                switch packet.destination {
                case .multicast:
                    result.append((index, attachment.link))
                case .unicast(let address):
                    if address.address == attachment.address { result.append((index, attachment.link)) }
                }
            }
        }
        return result
    }

    // MARK: - Reading what happened

    /// Events delivered to one operation of a host.
    func events(of host: Int, _ operation: OperationID) -> [(time: Instant, event: OperationEvent)] {
        hosts[host].events.filter { $0.operation == operation }.map { ($0.time, $0.event) }
    }

    /// The names a registration was announced under, in order, with the time of each.
    func registrations(of host: Int, _ operation: OperationID) -> [(time: Instant, name: DNSName)] {
        events(of: host, operation).compactMap { entry in
            if case .registered(let name) = entry.event { return (entry.time, name) } else { return nil }
        }
    }

    /// Packets a host sent, decoded.
    func packets(from host: Int) -> [(time: Instant, message: DNSMessage, destination: PacketDestination)] {
        wire.filter { $0.sender == host }.compactMap { packet in
            packet.message.map { (packet.time, $0, packet.destination) }
        }
    }

    /// Probes a host sent (queries with proposed records in the Authority section), optionally for one name.
    func probes(from host: Int, for name: DNSName? = nil) -> [(time: Instant, message: DNSMessage)] {
        packets(from: host).filter { packet in
            !packet.message.isResponse && !packet.message.authorities.isEmpty
                && (name.map { name in packet.message.questions.contains { $0.name == name } } ?? true)
        }.map { ($0.time, $0.message) }
    }

    /// Queries a host sent that are not probes.
    func queries(from host: Int) -> [(time: Instant, message: DNSMessage)] {
        packets(from: host).filter { !$0.message.isResponse && $0.message.authorities.isEmpty }.map {
            ($0.time, $0.message)
        }
    }

    /// Responses a host multicast, optionally only those carrying a record named `name` of type `type`.
    func multicastResponses(from host: Int, containing name: DNSName? = nil, type: RecordType? = nil)
        -> [(time: Instant, message: DNSMessage)]
    {
        packets(from: host).filter { packet in
            packet.message.isResponse && packet.destination == .multicast
                && packet.message.answers.contains {
                    (name == nil || $0.name == name!) && (type == nil || $0.type == type!)
                }
        }.map { ($0.time, $0.message) }
    }

    /// Responses a host sent by unicast.
    func unicastResponses(from host: Int) -> [(time: Instant, message: DNSMessage, to: SocketAddress)] {
        packets(from: host).compactMap { packet in
            guard packet.message.isResponse, case .unicast(let address) = packet.destination else { return nil }
            return (packet.time, packet.message, address)
        }
    }
}

// MARK: - Building packets for scripted peers

extension DNSMessage {
    /// The message in wire form (no size limit).
    var wire: [UInt8] { try! serialized() }

    /// A query from a scripted peer.
    static func query(
        _ questions: [DNSQuestion], knownAnswers: [ResourceRecord] = [], truncated: Bool = false,
        id: UInt16 = 0
    ) -> DNSMessage {
        var flags = DNSFlags()
        flags.isTruncated = truncated
        return DNSMessage(id: id, flags: flags, questions: questions, answers: knownAnswers)
    }

    /// A probe: ANY questions for the names, the proposed records in the Authority section.
    static func probe(_ records: [ResourceRecord], unicastResponse: Bool = false) -> DNSMessage {
        var names: [DNSName] = []
        for record in records where !names.contains(record.name) { names.append(record.name) }
        return DNSMessage(
            questions: names.map { DNSQuestion(name: $0, type: .any, unicastResponse: unicastResponse) },
            authorities: records)
    }

    /// A multicast response from a scripted peer.
    static func response(_ answers: [ResourceRecord], additionals: [ResourceRecord] = []) -> DNSMessage {
        DNSMessage(flags: .authoritativeResponse, answers: answers, additionals: additionals)
    }

    /// Every record in the answer and additional sections.
    var answersAndAdditionals: [ResourceRecord] { answers + additionals }
}

extension ResourceRecord {
    /// The same record with another TTL.
    func with(ttl: UInt32) -> ResourceRecord {
        var copy = self
        copy.ttl = ttl
        return copy
    }

    /// The same record with the cache-flush bit set or cleared.
    func with(cacheFlush: Bool) -> ResourceRecord {
        var copy = self
        copy.cacheFlush = cacheFlush
        return copy
    }
}

extension Array {
    /// Differences between consecutive elements of a projection.
    func gaps(_ value: (Element) -> Int) -> [Int] {
        guard count > 1 else { return [] }
        return (1..<count).map { value(self[$0]) - value(self[$0 - 1]) }
    }
}
