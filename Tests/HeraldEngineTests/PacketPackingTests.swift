import HeraldWire
import Testing

@testable import HeraldEngine

@Suite("Packing records and probes into packets that are never fragmented, except for one record alone (RFC 6762 §17)")
struct PacketPackingTests {
    let room = MessageRoom(
        shared: MessageSizeLimit.default.sharedPayloadLimit(ipv6: false),
        alone: MessageSizeLimit.default.payloadLimit(ipv6: false))

    func txt(_ name: DNSName, bytes: Int) throws -> ResourceRecord {
        let strings = stride(from: 0, to: bytes, by: 200).map {
            Array(repeating: UInt8(ascii: "t"), count: min(200, bytes - $0))
        }
        return ResourceRecord(name: name, ttl: 4500, data: .txt(try TXTRecord(strings: strings)), cacheFlush: true)
    }

    func probe(_ label: String, txtBytes: Int) throws -> MulticastBatch.Probe {
        let name = Fixture.instance(label)
        let srv = ResourceRecord(
            name: name, ttl: 120, data: .srv(SRVData(priority: 0, weight: 0, port: 80, target: "host.local.")))
        return MulticastBatch.Probe(
            questions: [DNSQuestion(name: name, type: .any)], proposed: [srv, try txt(name, bytes: txtBytes)])
    }

    @Test("nothing to pack gives no packet")
    func empty() {
        #expect(MulticastBatch.pack([], room: room).isEmpty)
        #expect(AnswerBuilder.pack(answers: [], additionals: [], room: room).isEmpty)
    }

    @Test("probes of mixed sizes: each exactly once, whole, in packets within a frame unless a probe is alone")
    func mixedProbes() throws {
        var probes: [MulticastBatch.Probe] = []
        for n in 0..<120 { probes.append(try probe("P\(n)", txtBytes: n == 37 ? 4000 : [10, 150, 600][n % 3])) }
        let packed = MulticastBatch.pack(probes, room: room)
        let packets = try packed.map { try DNSMessage(parsing: $0) }
        let asked = packets.flatMap(\.questions).map(\.name)
        #expect(asked.count == 120 && Set(asked) == Set(probes.flatMap(\.questions).map(\.name)))
        for (bytes, message) in zip(packed, packets) {
            #expect(bytes.count <= room.alone)
            if bytes.count > room.shared { #expect(message.questions.map(\.name) == [Fixture.instance("P37")]) }
            for question in message.questions {
                #expect(message.authorities.filter { $0.name == question.name }.count == 2, "\(question.name) split")
            }
        }
        // Packed: each packet but the last is too full for the probe that follows it.
        #expect(packets.count < 120 / 2)
        var next = 0
        for message in packets.dropLast() {
            next += message.questions.count
            #expect(MulticastBatch.pack(Array(probes[(next - message.questions.count)...next]), room: room).count > 1)
        }
    }

    @Test("a probe too big even for a fragmented datagram goes out as far as it fits")
    func hugeProbe() throws {
        let packets = MulticastBatch.pack(
            [try probe("Huge", txtBytes: 12_000), try probe("Small", txtBytes: 10)], room: room)
        #expect(packets.count == 2)
        #expect(packets[0].count <= room.alone)
        let first = try DNSMessage(parsing: packets[0])
        #expect(first.questions.map(\.name) == [Fixture.instance("Huge")] && first.authorities.map(\.type) == [.srv])
        #expect(try DNSMessage(parsing: packets[1]).questions.map(\.name) == [Fixture.instance("Small")])
    }

    @Test("answers: a record too big to share a frame goes alone; the others share frames, each once, additionals last")
    func answers() throws {
        var answers: [ResourceRecord] = []
        for n in 0..<80 { answers.append(try txt(Fixture.instance("A\(n)"), bytes: n == 5 ? 3000 : 100)) }
        let additional = ResourceRecord(
            name: "host.local.", ttl: 120, data: .a(IPv4Address(10, 0, 0, 1)), cacheFlush: true)
        let packets = AnswerBuilder.pack(answers: answers + [answers[0]], additionals: [additional], room: room)
        let messages = try packets.map { try DNSMessage(parsing: $0) }
        // Each answer once (the duplicate dropped), though the big one may come before those it followed.
        #expect(Set(messages.flatMap(\.answers).map(\.name)) == Set(answers.map(\.name)))
        #expect(messages.flatMap(\.answers).count == 80)
        for (bytes, message) in zip(packets, messages) where bytes.count > room.shared {
            #expect(message.answers.map(\.name) == [Fixture.instance("A5")] && message.additionals.isEmpty)
        }
        #expect(packets.filter { $0.count > room.shared }.count == 1)
        #expect(messages.flatMap(\.additionals) == [additional] && messages.last?.additionals == [additional])
    }
}
