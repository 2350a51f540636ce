import HeraldWire

/// Which sockets of a moved process heraldd ends (docs/enforcement.md, "Sockets made before a process moved"):
/// the moved-socket programs refuse a new connect() or sendmsg() on them, but a connection made before the move
/// needs neither, so heraldd ends those (SOCK_DESTROY) whose destination the process's standing holds back.
package enum MovedSocketEnding {
    /// An open socket as the kernel reports it.
    package struct OpenSocket: Hashable, Sendable {
        /// The peer's address; nil for a socket with none (a listener, an unconnected UDP socket).
        package var peer: IPPrefix.Address?
        package var peerPort: UInt16
        /// The local address a listener is bound to (nil: any).
        package var local: IPPrefix.Address?
        package var isListener: Bool

        package init(peer: IPPrefix.Address?, peerPort: UInt16, local: IPPrefix.Address?, isListener: Bool) {
            self.peer = peer
            self.peerPort = peerPort
            self.local = local
            self.isListener = isListener
        }
    }

    /// True when `socket`, made in a cgroup of standing `origin` and now used by a process of standing `caller`,
    /// must end: the caller stands stricter, and the socket reaches what the caller's standing holds back (a
    /// listener hears the whole LAN; port 53 and loopback always pass, as in the rules).
    package static func mustEnd(
        _ socket: OpenSocket, origin: SocketStanding, caller: SocketStanding, networks: LocalNetworks
    ) -> Bool {
        guard caller > origin else { return false }
        if socket.isListener {
            guard caller == .held else { return false }
            return socket.local.map { !isLoopback($0) } ?? true
        }
        guard let peer = socket.peer, !isLoopback(peer), socket.peerPort != 53 else { return false }
        if networks.isGroup(peer) { return true }
        return caller == .held && networks.isUnicast(peer)
    }

    private static func isLoopback(_ address: IPPrefix.Address) -> Bool {
        switch address {
        case .v4(let v4): return v4.value >> 24 == 127
        case .v6(let v6): return v6 == IPv6Address(high: 0, low: 1)
        }
    }
}

extension LocalNetworks {
    /// True when `address` lies in one of the unicast blocks.
    package func isUnicast(_ address: IPPrefix.Address) -> Bool {
        (unicast4 + unicast6).contains { $0.contains(address) }
    }

    /// True when `address` is multicast or broadcast.
    package func isGroup(_ address: IPPrefix.Address) -> Bool {
        (group4 + group6).contains { $0.contains(address) }
    }
}

extension IPPrefix {
    /// True when `address` lies inside this block.
    package func contains(_ address: Address) -> Bool {
        switch address {
        case .v4: return contains(IPPrefix(address, length: 32))
        case .v6: return contains(IPPrefix(address, length: 128))
        }
    }
}
