import HeraldWire
import Testing

@Suite("Record data from uncompressed bytes (the dnssd API's rdata)")
struct RecordDataDecodeTests {
    @Test("known types are decoded and checked, others kept opaque, bad data refused")
    func decode() throws {
        #expect(try RecordData.decode(type: .a, uncompressed: [10, 0, 0, 7]) == .a(IPv4Address("10.0.0.7")!))
        #expect(
            try RecordData.decode(type: .txt, uncompressed: [3, 0x61, 0x3D, 0x31])
                == .txt(try TXTRecord(rdata: [3, 0x61, 0x3D, 0x31])))
        let srv = try RecordData.decode(
            type: .srv, uncompressed: [0, 1, 0, 2, 0x1F, 0x90, 3, 0x62, 0x6F, 0x78, 5] + Array("local".utf8) + [0])
        #expect(srv == .srv(SRVData(priority: 1, weight: 2, port: 8080, target: "box.local.")))
        #expect(try RecordData.decode(type: RecordType(65280), uncompressed: [1, 2, 3]) == .opaque([1, 2, 3]))
        #expect(throws: DNSWireError.self) { try RecordData.decode(type: .a, uncompressed: [10, 0, 0]) }
        #expect(throws: DNSWireError.self) { try RecordData.decode(type: .srv, uncompressed: [0, 1]) }
    }
}
