import CHeraldSystem
import HeraldEngine
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// A datagram as it arrived: the bytes, who sent it, the interface it came in on, and whether it was sent
/// to the mDNS group or to one of our own addresses.
package struct ReceivedDatagram: Sendable {
    package var bytes: [UInt8]
    package var source: HeraldEngine.SocketAddress
    package var interfaceIndex: Int
    package var toUnicast: Bool
}

/// The UDP socket of one IP family on port 5353 (RFC 6762 §3): it joins the mDNS group per interface,
/// reports the arriving interface and destination of each packet (IP_PKTINFO / IPV6_PKTINFO), and sends
/// each packet out of the interface the engine chose, with IP TTL / hop limit 255 (RFC 6762 §11).
package final class MulticastSocket {
    package let family: IPFamily
    package let fd: Int32
    private var joined = Set<Int>()
    private var receiveBuffer = [UInt8](repeating: 0, count: 65_536)
    private var controlBuffer = [UInt8](repeating: 0, count: 256)

    /// Opens and binds the socket on `port` (5353 except in tests that need another).
    package init(family: IPFamily, port: UInt16 = HeraldWire.mdnsPort) throws(SystemError) {
        self.family = family
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let fd = socket(
            domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket(\(family.rawValue))") }
        self.fd = fd
        do throws(SystemError) {
            try setOption(SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            try setOption(SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT")
            reserveReceiveBuffer()
            if family == .ipv4 {
                try setOption(Int32(IPPROTO_IP), LinuxSocketOptions.ipPacketInfo, 1, "IP_PKTINFO")
                try setOption(Int32(IPPROTO_IP), IP_MULTICAST_TTL, 255, "IP_MULTICAST_TTL")
                try setOption(Int32(IPPROTO_IP), IP_TTL, 255, "IP_TTL")
                try setOption(Int32(IPPROTO_IP), IP_MULTICAST_LOOP, 1, "IP_MULTICAST_LOOP")
                try setOption(Int32(IPPROTO_IP), LinuxSocketOptions.ipMulticastAll, 0, "IP_MULTICAST_ALL")
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = 0
                let result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard result == 0 else { throw SystemError("bind(0.0.0.0:\(port))") }
            } else {
                try setOption(Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1, "IPV6_V6ONLY")
                try setOption(Int32(IPPROTO_IPV6), LinuxSocketOptions.ipv6ReceivePacketInfo, 1, "IPV6_RECVPKTINFO")
                try setOption(Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, 255, "IPV6_MULTICAST_HOPS")
                try setOption(Int32(IPPROTO_IPV6), IPV6_UNICAST_HOPS, 255, "IPV6_UNICAST_HOPS")
                try setOption(Int32(IPPROTO_IPV6), IPV6_MULTICAST_LOOP, 1, "IPV6_MULTICAST_LOOP")
                try setOption(Int32(IPPROTO_IPV6), LinuxSocketOptions.ipv6MulticastAll, 0, "IPV6_MULTICAST_ALL")
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                let result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
                guard result == 0 else { throw SystemError("bind([::]:\(port))") }
            }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Room for the answers a busy LAN sends at once (a query for hundreds of service types is answered by every
    /// host within the same 20–120 ms): the default of about 200 KiB holds some 300 packets, and what does not fit
    /// is lost until the question is asked again. Beyond `net.core.rmem_max` only with CAP_NET_ADMIN; without it,
    /// whatever the kernel allows. The kernel charges this memory only while packets wait in it.
    private func reserveReceiveBuffer() {
        var bytes = Self.receiveBufferBytes
        let size = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, LinuxSocketOptions.receiveBufferForce, &bytes, size) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, size)
        }
    }

    /// What `reserveReceiveBuffer` asks for (the kernel doubles it for its bookkeeping).
    static let receiveBufferBytes: Int32 = 1 << 20

    private func setOption(_ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws(SystemError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SystemError("setsockopt(\(label))")
        }
    }

    /// Joins the mDNS group on an interface (idempotent).
    package func join(interfaceIndex: Int) throws(SystemError) {
        guard !joined.contains(interfaceIndex) else { return }
        try membership(add: true, interfaceIndex: interfaceIndex)
        joined.insert(interfaceIndex)
    }

    /// Leaves the group on an interface (ignores an interface that is already gone).
    package func leave(interfaceIndex: Int) {
        guard joined.remove(interfaceIndex) != nil else { return }
        try? membership(add: false, interfaceIndex: interfaceIndex)
    }

    private func membership(add: Bool, interfaceIndex: Int) throws(SystemError) {
        var request = [UInt8]()
        if family == .ipv4 {
            // struct ip_mreqn { in_addr multiaddr; in_addr address; int ifindex; }
            request = HeraldWire.ipv4Group.bytes + [0, 0, 0, 0] + Self.int32Bytes(Int32(interfaceIndex))
            let option = add ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP
            guard setsockopt(fd, Int32(IPPROTO_IP), option, request, socklen_t(request.count)) == 0 else {
                throw SystemError("IP_ADD_MEMBERSHIP(if \(interfaceIndex))")
            }
        } else {
            // struct ipv6_mreq { in6_addr multiaddr; unsigned int interface; }
            request = HeraldWire.ipv6Group.bytes + Self.int32Bytes(Int32(interfaceIndex))
            let option = add ? IPV6_ADD_MEMBERSHIP : IPV6_DROP_MEMBERSHIP
            guard setsockopt(fd, Int32(IPPROTO_IPV6), option, request, socklen_t(request.count)) == 0 else {
                throw SystemError("IPV6_ADD_MEMBERSHIP(if \(interfaceIndex))")
            }
        }
    }

    private static func int32Bytes(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }  // host byte order, as the kernel expects
    }

    // MARK: - Receiving

    /// Reads one datagram, or nil when none is waiting. Datagrams that cannot be attributed to an interface
    /// are dropped.
    package func receive() -> ReceivedDatagram? {
        while true {
            var storage = sockaddr_storage()
            let (received, control) = receiveBuffer.withUnsafeMutableBytes { data in
                controlBuffer.withUnsafeMutableBytes { controlBytes in
                    withUnsafeMutablePointer(to: &storage) { storagePointer -> (Int, [UInt8]) in
                        var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                            var header = msghdr()
                            header.msg_name = UnsafeMutableRawPointer(storagePointer)
                            header.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                            header.msg_iov = vectorPointer
                            header.msg_iovlen = 1
                            header.msg_control = controlBytes.baseAddress
                            header.msg_controllen = controlBytes.count
                            let count = recvmsg(fd, &header, 0)
                            let controlLength = min(Int(header.msg_controllen), controlBytes.count)
                            return (count, Array(controlBytes[0..<max(0, controlLength)]))
                        }
                    }
                }
            }
            if received < 0 { return nil }  // EAGAIN, or an error the next read reports again
            guard let source = SocketAddressConversion.address(from: storage),
                let info = ControlMessages.packetInfo(in: control, family: family)
            else { continue }
            return ReceivedDatagram(
                bytes: Array(receiveBuffer[0..<received]), source: source,
                interfaceIndex: info.interfaceIndex, toUnicast: !info.toMulticast)
        }
    }

    // MARK: - Sending

    /// Sends `bytes` out of `interfaceIndex`, to the mDNS group or to one peer. Returns false when the kernel
    /// refused (e.g. the interface just went away); the daemon logs and carries on.
    @discardableResult
    package func send(_ bytes: [UInt8], interfaceIndex: Int, to destination: PacketDestination) -> Bool {
        let target: HeraldEngine.SocketAddress
        switch destination {
        case .multicast:
            target =
                family == .ipv4
                ? HeraldEngine.SocketAddress(.v4(HeraldWire.ipv4Group), port: HeraldWire.mdnsPort)
                : HeraldEngine.SocketAddress(.v6(HeraldWire.ipv6Group), port: HeraldWire.mdnsPort)
        case .unicast(let address):
            target = address
        }
        var storage = SocketAddressConversion.storage(for: target, scope: interfaceIndex)
        let control = ControlMessages.packetInfoMessage(family: family, interfaceIndex: interfaceIndex)
        let sent = bytes.withUnsafeBytes { data in
            control.withUnsafeBytes { controlBytes in
                withUnsafeMutablePointer(to: &storage) { storagePointer -> Int in
                    var vector = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: data.baseAddress), iov_len: data.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var header = msghdr()
                        header.msg_name = UnsafeMutableRawPointer(storagePointer)
                        header.msg_namelen = socklen_t(
                            family == .ipv4 ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
                        header.msg_iov = vectorPointer
                        header.msg_iovlen = 1
                        header.msg_control = UnsafeMutableRawPointer(mutating: controlBytes.baseAddress)
                        header.msg_controllen = controlBytes.count
                        return sendmsg(fd, &header, Int32(MSG_NOSIGNAL))
                    }
                }
            }
        }
        return sent == bytes.count
    }
}

/// Socket options glibc defines only under _GNU_SOURCE, with their Linux values.
enum LinuxSocketOptions {
    static let ipPacketInfo: Int32 = 8  // IP_PKTINFO
    static let receiveBufferForce: Int32 = 33  // SO_RCVBUFFORCE
    static let ipMulticastAll: Int32 = 49  // IP_MULTICAST_ALL
    static let ipv6ReceivePacketInfo: Int32 = 49  // IPV6_RECVPKTINFO
    static let ipv6PacketInfo: Int32 = 50  // IPV6_PKTINFO
    static let ipv6MulticastAll: Int32 = 29  // IPV6_MULTICAST_ALL
}
