import HeraldBroker
import HeraldWire
import Testing

@Suite("Which sockets of a moved process heraldd ends")
struct MovedSocketEndingTests {
    static let networks = LocalNetworks(addresses: [
        (.v4(IPv4Address(10, 0, 0, 5)), 24), (.v6(IPv6Address("fd00::5")!), 64),
    ])
    static func connection(_ peer: String, port: UInt16 = 7000) -> MovedSocketEnding.OpenSocket {
        let address: IPPrefix.Address =
            peer.contains(":") ? .v6(IPv6Address(peer)!) : .v4(IPv4Address(peer)!)
        return .init(peer: address, peerPort: port, local: nil, isListener: false)
    }
    static func ends(
        _ socket: MovedSocketEnding.OpenSocket, origin: SocketStanding = .open, caller: SocketStanding = .held
    ) -> Bool {
        MovedSocketEnding.mustEnd(socket, origin: origin, caller: caller, networks: networks)
    }

    @Test("Held back: connections to the LAN end; the outside, port 53 and loopback stay")
    func held() {
        #expect(Self.ends(Self.connection("10.0.0.9")))
        #expect(Self.ends(Self.connection("fd00::9")))
        #expect(Self.ends(Self.connection("fe80::1")))
        #expect(Self.ends(Self.connection("224.0.0.251", port: 5353)))
        #expect(!Self.ends(Self.connection("203.0.113.7")))
        #expect(!Self.ends(Self.connection("10.0.0.1", port: 53)))
        #expect(!Self.ends(Self.connection("127.0.0.1")))
        #expect(!Self.ends(.init(peer: nil, peerPort: 0, local: nil, isListener: false)))
    }

    @Test("Listeners end where the whole LAN is held back, unless bound to loopback")
    func listeners() {
        let any = MovedSocketEnding.OpenSocket(peer: nil, peerPort: 0, local: nil, isListener: true)
        let loopback = MovedSocketEnding.OpenSocket(
            peer: nil, peerPort: 0, local: .v4(IPv4Address(127, 0, 0, 1)), isListener: true)
        #expect(Self.ends(any))
        #expect(!Self.ends(loopback))
        #expect(!Self.ends(any, caller: .groupsHeld))
    }

    @Test("Only a caller stricter than the socket's origin; groups-held ends only group destinations")
    func standings() {
        #expect(!Self.ends(Self.connection("10.0.0.9"), origin: .held, caller: .held))
        #expect(!Self.ends(Self.connection("10.0.0.9"), origin: .open, caller: .open))
        #expect(!Self.ends(Self.connection("10.0.0.9"), origin: .open, caller: .groupsHeld))
        #expect(Self.ends(Self.connection("239.255.255.250", port: 1900), origin: .open, caller: .groupsHeld))
        #expect(Self.ends(Self.connection("10.0.0.255"), origin: .open, caller: .groupsHeld))
        #expect(Self.ends(Self.connection("10.0.0.9"), origin: .groupsHeld, caller: .held))
    }
}
