import HeraldWire
import Testing

/// A legacy unicast reply (RFC 6762 §6.7) must read as ordinary unicast DNS: names in SRV (RFC 2782) and NSEC
/// (RFC 4034 §4.1.1) record data are written out in full, which strict DNS libraries require; PTR data may still
/// point into the message, and on port 5353 everything is compressed (RFC 6762 §18.14).
@Suite("Message writer: compression inside record data for unicast DNS clients")
struct UnicastCompressionTests {
    let instance: DNSName = "Office._ipp._tcp.local."
    let host: DNSName = "printer.local."

    func write(_ compression: MessageWriter.RecordDataCompression) throws -> [UInt8] {
        var writer = MessageWriter(id: 0x1234, flags: .authoritativeResponse, recordDataCompression: compression)
        let fitted = [
            writer.append(ResourceRecord(name: "_ipp._tcp.local.", ttl: 10, data: .ptr(instance)), to: .answer),
            writer.append(
                ResourceRecord(name: instance, ttl: 10, data: .srv(SRVData(port: 631, target: host))),
                to: .additional),
            writer.append(
                ResourceRecord(name: host, ttl: 10, data: .nsec(next: host, types: TypeBitmap(types: [.a]))),
                to: .additional),
        ]
        #expect(fitted == [true, true, true])
        return writer.message
    }

    /// The record data of each record in the message, in order (header and question-free layout known).
    func recordData(_ bytes: [UInt8]) -> [[UInt8]] {
        var offset = 12
        var result: [[UInt8]] = []
        func skipName() {
            while bytes[offset] != 0 {
                if bytes[offset] >= 0xC0 {
                    offset += 2
                    return
                }
                offset += 1 + Int(bytes[offset])
            }
            offset += 1
        }
        for _ in 0..<3 {
            skipName()
            offset += 8
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            result.append(Array(bytes[offset..<(offset + length)]))
            offset += length
        }
        return result
    }

    @Test("for unicast DNS, SRV targets and NSEC next names are written in full; PTR data still compressed")
    func unicast() throws {
        let bytes = try write(.unicastDNS)
        let data = recordData(bytes)
        #expect(Array(data[0].suffix(2)) == [0xC0, 12], "PTR data points to _ipp._tcp.local")
        #expect(!data[1].contains(where: { $0 >= 0xC0 }))
        #expect(Array(data[1].dropFirst(6)) == host.wire + [0])
        #expect(Array(data[2].prefix(host.wire.count + 1)) == host.wire + [0])
        let parsed = try DNSMessage(parsing: bytes)
        #expect(
            parsed.additionals.map(\.data) == [
                .srv(SRVData(port: 631, target: host)),
                .nsec(next: host, types: TypeBitmap(types: [.a])),
            ])
    }

    @Test("for multicast DNS the same names are compressed")
    func multicast() throws {
        let unicast = try write(.unicastDNS)
        let bytes = try write(.multicastDNS)
        let data = recordData(bytes)
        #expect(data[1].count == 6 + 1 + 7 + 2, "SRV target: 'printer' and a pointer to local")
        #expect(data[2][0] >= 0xC0, "NSEC next name is a pointer")
        #expect(bytes.count < unicast.count)
        #expect(try DNSMessage(parsing: bytes).additionals == (try DNSMessage(parsing: unicast)).additionals)
    }
}
