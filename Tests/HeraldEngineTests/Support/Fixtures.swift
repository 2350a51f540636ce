import HeraldEngine
import HeraldWire

/// Names, registrations and scripted peers shared by the scenarios.
enum Fixture {
    static let ippType: DNSName = "_ipp._tcp.local."
    static let serviceTypes: DNSName = "_services._dns-sd._udp.local."

    /// `<label>._ipp._tcp.local.`
    static func instance(_ label: String) -> DNSName { try! ippType.prepending(label: label) }

    /// An IPP service registration.
    static func service(_ label: String, port: UInt16 = 631, txt: TXTRecord = .empty, autoRename: Bool = true)
        -> ServiceRegistration
    {
        ServiceRegistration(instance: label, type: ippType, port: port, txt: txt, autoRename: autoRename)
    }

    static func txt(_ pairs: KeyValuePairs<String, [UInt8]?>) -> TXTRecord { try! TXTRecord(pairs) }

    /// A peer's SRV record for `instance`, unique (cache-flush) with TTL 120 s.
    static func srv(_ instance: DNSName, port: UInt16 = 9, target: DNSName = "evil.local.", ttl: UInt32 = 120)
        -> ResourceRecord
    {
        ResourceRecord(name: instance, ttl: ttl, data: .srv(SRVData(port: port, target: target)), cacheFlush: true)
    }

    /// An A record.
    static func a(_ name: DNSName, _ address: IPv4Address, ttl: UInt32 = 120, flush: Bool = true) -> ResourceRecord {
        ResourceRecord(name: name, ttl: ttl, data: .a(address), cacheFlush: flush)
    }

    /// A PTR record (shared).
    static func ptr(_ name: DNSName, _ target: DNSName, ttl: UInt32 = 4500) -> ResourceRecord {
        ResourceRecord(name: name, ttl: ttl, data: .ptr(target))
    }

    static func question(_ name: DNSName, _ type: RecordType, qu: Bool = false) -> DNSQuestion {
        DNSQuestion(name: name, type: type, unicastResponse: qu)
    }

    /// A scripted peer that claims names: it answers every probe for a name `claims` accepts with an SRV record
    /// of its own for that name (a conflicting response, RFC 6762 §8.1).
    static func claimant(from source: SocketAddress, claims: @escaping (DNSName) -> Bool)
        -> (SimulatedLAN.WirePacket) -> [SimulatedLAN.Injection]
    {
        { packet in
            guard let message = packet.message, !message.isResponse, !message.authorities.isEmpty else { return [] }
            let names = message.questions.map(\.name).filter(claims)
            guard !names.isEmpty else { return [] }
            return [SimulatedLAN.Injection(bytes: DNSMessage.response(names.map { srv($0) }).wire, source: source)]
        }
    }

    /// A reflector: every multicast packet `host` sends comes back to it `delay` ms later from another address of
    /// the segment (10.0.0.99 or fe80::99).
    static func reflector(of host: Int, delay: Int = 2) -> (SimulatedLAN.WirePacket) -> [SimulatedLAN.Injection] {
        { packet in
            guard packet.sender == host, packet.destination == .multicast else { return [] }
            let source =
                packet.link.family == .ipv4
                ? SocketAddress(.v4(IPv4Address(10, 0, 0, 99)), port: 5353)
                : SocketAddress(.v6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 0x99)), port: 5353)
            return [
                SimulatedLAN.Injection(
                    bytes: packet.bytes, source: source, delay: delay, family: packet.link.family,
                    receiver: host)
            ]
        }
    }
}

/// A record's identity within a packet: name (case-insensitive), type, class and data.
struct RecordIdentityForTest: Hashable {
    var name: DNSName
    var type: RecordType
    var recordClass: RecordClass
    var data: RecordData
    init(_ record: ResourceRecord) {
        name = record.name
        type = record.type
        recordClass = record.recordClass
        data = record.data
    }
}
