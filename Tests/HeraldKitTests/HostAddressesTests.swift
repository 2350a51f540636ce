import HeraldClient
import HeraldIPC
import Testing

@Suite("An address lookup is complete when each family has an address or a negative answer")
struct HostAddressesTests {
    static let v4: [UInt8] = [10, 0, 0, 7]
    static let v6: [UInt8] = [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [7]

    func address(_ rdata: [UInt8], added: Bool = true) -> AddrInfoReply {
        AddrInfoReply(
            flags: added ? .add : [], interfaceIndex: 2, error: .noError, hostname: "printer.local.",
            rrtype: rdata.count == 4 ? 1 : 28, rrclass: 1, rdata: rdata, ttl: 120)
    }

    func negative(_ family: HostAddresses.Family, shown: Bool = true) -> AddrInfoReply {
        AddrInfoReply(
            flags: shown ? .add : [], interfaceIndex: 2, error: .noSuchRecord, hostname: "printer.local.",
            rrtype: family.rawValue, rrclass: 1, rdata: [], ttl: shown ? 120 : 0)
    }

    @Test func anIPv4AddressAloneIsNotComplete() {
        var known = HostAddresses()
        #expect(!known.isComplete)
        let changed1 = known.apply(address(Self.v4))
        #expect(changed1)
        #expect(!known.isComplete)
        #expect(known.addresses == [Self.v4])
    }

    @Test func anAddressAndANegativeAnswerForTheOtherFamilyAreComplete() {
        var known = HostAddresses()
        known.apply(address(Self.v4))
        let changed2 = known.apply(negative(.ipv6))
        #expect(changed2)
        #expect(known.isComplete)
        #expect(known.absentFamilies == [.ipv6])
    }

    @Test func oneAddressOfEachFamilyIsComplete() {
        var known = HostAddresses()
        known.apply(address(Self.v6))
        #expect(!known.isComplete)
        known.apply(address(Self.v4))
        #expect(known.isComplete)
        #expect(known.addresses == [Self.v6, Self.v4])
    }

    @Test func negativeAnswersForBothFamiliesAreCompleteWithNoAddress() {
        var known = HostAddresses()
        known.apply(negative(.ipv4))
        known.apply(negative(.ipv6))
        #expect(known.isComplete)
        #expect(known.addresses.isEmpty)
    }

    @Test func aRemovedAddressOrAnEndedNegativeAnswerMakesItIncompleteAgain() {
        var known = HostAddresses()
        known.apply(address(Self.v4))
        known.apply(negative(.ipv6))
        let changed3 = known.apply(negative(.ipv6, shown: false))
        #expect(changed3)
        #expect(!known.isComplete)
        known.apply(address(Self.v6))
        #expect(known.isComplete)
        let changed4 = known.apply(address(Self.v4, added: false))
        #expect(changed4)
        #expect(!known.isComplete)
    }

    @Test func repeatsAndMismatchedRepliesChangeNothing() {
        var known = HostAddresses()
        known.apply(address(Self.v4))
        let changed5 = known.apply(address(Self.v4))
        #expect(!changed5)
        let changed6 = known.apply(address(Self.v6, added: false))
        #expect(!changed6)
        var wrongLength = address(Self.v4)
        wrongLength.rrtype = 28
        let changed7 = known.apply(wrongLength)
        #expect(!changed7)
        var failed = address(Self.v6)
        failed.error = .unknown
        let changed8 = known.apply(failed)
        #expect(!changed8)
        #expect(known.addresses == [Self.v4])
        #expect(!known.isComplete)
    }
}
