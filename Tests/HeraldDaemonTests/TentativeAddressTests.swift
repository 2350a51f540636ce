import HeraldWire
import Testing

@testable import HeraldDaemon

#if canImport(Glibc)
    import Glibc
#endif

@Suite("IPv6 addresses still tentative (duplicate address detection) are told apart in the kernel's address dump")
struct TentativeAddressTests {
    /// One RTM_NEWADDR message: the header, struct ifaddrmsg, IFA_ADDRESS, and when given IFA_LOCAL and IFA_FLAGS.
    func newAddress(
        index: UInt32, address: IPv6Address, flags: UInt8, extendedFlags: UInt32? = nil,
        local: IPv6Address? = nil
    ) -> [UInt8] {
        var body: [UInt8] = [UInt8(AF_INET6), 64, flags, 0xFD] + le32(index)
        body += le16(20) + le16(1) + address.bytes
        if let local { body += le16(20) + le16(2) + local.bytes }
        if let extendedFlags { body += le16(8) + le16(8) + le32(extendedFlags) }
        return le32(UInt32(16 + body.count)) + le16(20) + le16(2) + le32(1) + le32(0) + body
    }

    func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * UInt32($0))) & 0xFF) } }

    let done: [UInt8] = [20, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    @Test("tentative and duplicate addresses are listed, usable ones not, and the end of the dump is seen")
    func parseDump() throws {
        let linkLocal = try #require(IPv6Address("fe80::1"))
        let ula = try #require(IPv6Address("fd00::7"))
        let duplicate = try #require(IPv6Address("fd00::8"))
        let ready = try #require(IPv6Address("fe80::2"))
        let dump =
            newAddress(index: 7, address: linkLocal, flags: 0x40)
            // Tentative in IFA_FLAGS only.
            + newAddress(index: 7, address: ula, flags: 0x80, extendedFlags: 0x0000_0240)
            + newAddress(index: 9, address: duplicate, flags: 0x08)
            + newAddress(index: 7, address: ready, flags: 0x80)
        #expect(
            TentativeAddresses.parse(dump)
                == .more([
                    .init(interfaceIndex: 7, address: linkLocal), .init(interfaceIndex: 7, address: ula),
                    .init(interfaceIndex: 9, address: duplicate),
                ]))
        #expect(TentativeAddresses.parse(newAddress(index: 3, address: ready, flags: 0) + done) == .done([]))
        // A truncated message ends the batch without reading past it.
        let cut = Array(newAddress(index: 7, address: linkLocal, flags: 0x40).prefix(30))
        #expect(TentativeAddresses.parse(cut) == .more([]))
    }

    @Test("on a point-to-point link the host's own address (IFA_LOCAL) is the one listed, not the peer's")
    func pointToPointListsTheLocalAddress() throws {
        let peer = try #require(IPv6Address("fe80::99"))
        let own = try #require(IPv6Address("fe80::1"))
        #expect(
            TentativeAddresses.parse(newAddress(index: 4, address: peer, flags: 0x40, local: own))
                == .more([.init(interfaceIndex: 4, address: own)]))
    }

    @Test("an optimistic address is usable while duplicate detection runs; one found duplicate is not")
    func optimisticAddressesAreUsable() throws {
        let optimistic = try #require(IPv6Address("fd00::9"))
        #expect(TentativeAddresses.parse(newAddress(index: 5, address: optimistic, flags: 0x44)) == .more([]))
        #expect(
            TentativeAddresses.parse(newAddress(index: 5, address: optimistic, flags: 0x0C))
                == .more([.init(interfaceIndex: 5, address: optimistic)]))
    }
}
