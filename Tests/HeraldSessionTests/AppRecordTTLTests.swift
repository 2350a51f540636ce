import HeraldEngine
import HeraldWire
import Testing

@testable import HeraldSession

@Suite("TTLs apps give their records")
struct AppRecordTTLTests {
    @Test("0 means the default for the type; a TTL with its top bit set goes out as 2³¹−1, never as a goodbye")
    func clamped() {
        #expect(SessionCore.ttl(0, for: .a) == MDNSConstants.hostRecordTTL)
        #expect(SessionCore.ttl(0, for: .txt) == MDNSConstants.otherRecordTTL)
        #expect(SessionCore.ttl(300, for: .txt) == 300)
        #expect(SessionCore.ttl(0x7FFF_FFFF, for: .txt) == 0x7FFF_FFFF)
        for sent: UInt32 in [0x8000_0000, 0xFFFF_FFFF] {
            let ttl = SessionCore.ttl(sent, for: .txt)
            #expect(ttl == 0x7FFF_FFFF)
            // What a peer reads back is the same lifetime, not zero.
            let message = DNSMessage(
                flags: DNSFlags(rawValue: 0x8400),
                answers: [ResourceRecord(name: "box.local.", ttl: ttl, data: .a(IPv4Address(10, 0, 0, 1)))])
            #expect((try? DNSMessage(parsing: try message.serialized()))?.answers.first?.ttl == 0x7FFF_FFFF)
        }
    }
}
