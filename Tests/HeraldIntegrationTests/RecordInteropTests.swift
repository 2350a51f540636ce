import Foundation
import Testing

/// Records through the app socket, seen from another host: a record added to a registration
/// (`DNSServiceAddRecord`), its removal, and a record registered by itself (`DNSServiceRegisterRecord`).
@Suite("Individual records through the app socket")
struct RecordInteropTests {
    @Test("an added record and a registered record are answered on the network, and gone after their removal")
    func addedAndRegisteredRecords() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (home, away) = (lan.hosts[0], lan.hosts[1])
        let daemon = try home.startHeraldd()
        let peer = try away.startHeraldd()
        let client = try home.spawn(["python3", "-u", "-c", Self.client, daemon.socket])
        defer { client.terminate(grace: 1) }

        try client.waitForOutput(containing: "service registered", in: .stdout, timeout: 10)
        try client.waitForOutput(containing: "record registered status 0", in: .stdout, timeout: 10)
        try client.waitForOutput(containing: "added HINFO", in: .stdout, timeout: 5)
        // Seen from the other host, by multicast queries.
        let added = try peer.herald(["query", "Record Game._hrec._tcp.local.", "HINFO", "--timeout", "4"])
        #expect(added.status == 0 && added.stdout.contains("HINFO"), "\(added)")
        let registered = try peer.herald(["query", "record-box.local.", "HINFO", "--timeout", "4"])
        #expect(registered.status == 0 && registered.stdout.contains("HINFO"), "\(registered)")

        // The client removes both; the peer's cache forgets them after the goodbyes.
        client.send(SIGUSR1)
        try client.waitForOutput(containing: "removed", in: .stdout, timeout: 5)
        usleep(1_500_000)
        let gone = try peer.herald(["query", "Record Game._hrec._tcp.local.", "HINFO", "--timeout", "2"])
        #expect(gone.status == 1, "the added record is gone: \(gone)")
        let goneToo = try peer.herald(["query", "record-box.local.", "HINFO", "--timeout", "2"])
        #expect(goneToo.status == 1, "the registered record is gone: \(goneToo)")
        let service = try peer.herald(["resolve", "Record Game", "_hrec._tcp", "--timeout", "4"])
        #expect(service.status == 0, "the service itself stays: \(service)")
    }

    @Test("DNSServiceReconfirmRecord of an address whose host vanished without a goodbye flushes it within ten seconds")
    func reconfirmFlushesAVanishedAddress() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (home, away) = (lan.hosts[0], lan.hosts[1])
        let daemon = try home.startHeraldd()
        let peer = try away.startHeraldd(hostName: "vanishing")
        usleep(1_500_000)  // its host name is announced about a second after it starts
        let lookup = { try daemon.herald(["lookup", "vanishing.local", "--ipv4", "--timeout", "1.5"]) }
        let before = try lookup()
        #expect(before.status == 0 && before.stdout.contains(away.ipv4), "\(before)")
        // Gone without a goodbye: its address stays cached for its TTL (120 s).
        peer.process.send(SIGKILL)
        _ = peer.process.waitForExit(timeout: 5)
        #expect(try lookup().status == 0)
        // The app found the address does not work and says so.
        let reconfirm = try home.run([
            "python3", "-c", DNSSDByHand.python + Self.reconfirmAddress, daemon.socket,
            "vanishing.local.", away.ipv4,
        ])
        #expect(reconfirm.stdout.contains("status 0"), "\(reconfirm)")
        let flushed = try waitUntil(timeout: 15) { try lookup().status == 1 }
        #expect(flushed.held && flushed.after < 13, "\(flushed)\n\(daemon.log)")
    }

    /// After `DNSSDByHand.python`; argv: SOCKET NAME IPV4. Sends DNSServiceReconfirmRecord for `NAME A IPV4` on a
    /// connection of its own and prints its status.
    static let reconfirmAddress = #"""
        s = connect()
        body = struct.pack(">II", 0, 0) + sys.argv[2].encode() + b"\0" + struct.pack(">HHH", 1, 1, 4) + socket.inet_aton(sys.argv[3])
        request(s, 9, b"reconfrm", body)
        print("status", status_of(s), flush=True)
        """#

    /// argv: SOCKET. On one shared connection (statuses by async error replies, ipc_flags 4): registers a
    /// service, adds an HINFO record to it, registers a unique HINFO record of its own; on SIGUSR1 removes both.
    static let client = #"""
        import signal, socket, struct, sys, time
        path = sys.argv[1]
        NO_ERROR_SOCKET = 4

        def frame(op, body, context, index=0, flags=NO_ERROR_SOCKET):
            return struct.pack(">IIII8sI", 1, len(body), flags, op, struct.pack(">Q", context), index) + body

        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(path)
        connection.sendall(frame(1, b"", 0, flags=0))
        assert struct.unpack(">i", connection.recv(4))[0] == 0
        hinfo = bytes([3]) + b"ARM" + bytes([5]) + b"LINUX"

        def read_reply():
            header = b""
            while len(header) < 28:
                header += connection.recv(28 - len(header))
            version, length, flags, op, context, index = struct.unpack(">IIII8sI", header)
            body = b""
            while len(body) < length:
                body += connection.recv(length - len(body))
            return op, struct.unpack(">Q", context)[0], body

        # register (5): flags, interface, name, type, domain, host, port, TXT
        body = struct.pack(">II", 0, 0) + b"Record Game\0_hrec._tcp\0\0\0" + struct.pack(">HH", 7500, 0)
        connection.sendall(frame(5, body, 100))
        op, context, body = read_reply()
        assert op == 65 and context == 100, (op, context)
        print("service registered", flush=True)

        # register record (2) on the connection: unique (0x20) HINFO at record-box.local.
        body = struct.pack(">II", 0x20, 0) + b"record-box.local.\0" + struct.pack(">HHH", 13, 1, len(hinfo)) + hinfo \
            + struct.pack(">I", 0)
        connection.sendall(frame(2, body, 200, index=7))
        op, context, body = read_reply()
        flags, interface, error = struct.unpack(">IIi", body[:12])
        assert op == 69 and context == 200, (op, context)
        print("record registered status", error, flush=True)

        # add record (10) to the registration: HINFO at its instance name.
        body = struct.pack(">IHH", 0, 13, len(hinfo)) + hinfo + struct.pack(">I", 0)
        connection.sendall(frame(10, body, 100, index=1))
        print("added HINFO", flush=True)

        removed = []
        signal.signal(signal.SIGUSR1, lambda *_: removed.append(True))
        while not removed:
            time.sleep(0.05)
        # remove record (3): the added one (the registration's context), then the registered one (by its index).
        connection.sendall(frame(3, struct.pack(">I", 0), 100, index=1))
        connection.sendall(frame(3, struct.pack(">I", 0), 0, index=7))
        print("removed", flush=True)
        time.sleep(30)
        """#
}
