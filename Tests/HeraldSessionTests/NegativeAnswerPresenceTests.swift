import Testing

@testable import HeraldSession

@Suite("NoSuchRecord as a client sees it, per interface (kDNSServiceFlagsReturnIntermediates)")
struct NegativeAnswerPresenceTests {
    let aaaa = NegativeAnswerPresence.Key(interface: 2, type: 28)

    @Test(
        "on a dual-stack interface, a record on one link ends NoSuchRecord before it is shown, whatever the other link holds; its removal shows NoSuchRecord again while a link still says so"
    )
    func dualStack() {
        var presence = NegativeAnswerPresence()
        // Both links of the interface cache the peer's NSEC.
        #expect(presence.negative(aaaa, added: true, ttl: 120) == .shown(ttl: 120))
        #expect(presence.negative(aaaa, added: true, ttl: 118) == nil)
        // The record arrives on the IPv4 link: that link's negative answer ends, then the record is shown.
        #expect(presence.negative(aaaa, added: false) == nil)
        #expect(presence.record(aaaa, added: true) == .hidden)
        // The IPv6 link still holds its NSEC: nothing more to show.
        #expect(presence.negative(aaaa, added: false) == nil)
        #expect(presence.negative(aaaa, added: true, ttl: 90) == nil, "a record is shown: no NoSuchRecord beside it")
        // The record goes while the IPv6 link's NSEC stands: NoSuchRecord again, with that NSEC's TTL.
        #expect(presence.record(aaaa, added: false) == .shown(ttl: 90))
        #expect(presence.negative(aaaa, added: false) == .hidden)
    }

    @Test("interfaces and types are apart; removeAll forgets what was shown")
    func apart() {
        var presence = NegativeAnswerPresence()
        let other = NegativeAnswerPresence.Key(interface: 3, type: 28)
        let a = NegativeAnswerPresence.Key(interface: 2, type: 1)
        #expect(presence.negative(aaaa, added: true, ttl: 120) == .shown(ttl: 120))
        #expect(presence.negative(other, added: true, ttl: 60) == .shown(ttl: 60))
        #expect(presence.record(a, added: true) == nil)
        #expect(presence.record(other, added: true) == .hidden)
        presence.removeAll()
        #expect(presence.negative(aaaa, added: true, ttl: 100) == .shown(ttl: 100))
    }
}
