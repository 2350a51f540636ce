import Foundation
import Testing

extension HeraldOnTestLANs {
    /// One event followed by many app-socket operations: heraldd encodes the reply once and hands it to each
    /// operation with that operation's own client context.
    @Suite("App socket: one event for many browses", .serialized)
    struct AppSocketFanOutTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test("every browse of a type gets the new instance once, under its own client context")
        func eachBrowseGetsItsOwnContext() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startHeraldd()
            // Five connections, each browsing the type under a client context of its own.
            let clients = try host.spawn(["python3", "-u", "-c", #"""
                import socket, struct, sys
                def exactly(s, n):
                    data = b""
                    while len(data) < n:
                        chunk = s.recv(n - len(data))
                        if not chunk:
                            raise SystemExit("connection closed")
                        data += chunk
                    return data
                def browse(s, context):
                    body = struct.pack(">II", 0, 0) + b"_hfan._tcp\0local.\0"
                    s.sendall(struct.pack(">IIII8sI", 1, len(body), 0, 6, context, 0) + body)
                    if exactly(s, 4) != b"\0\0\0\0":
                        raise SystemExit("browse refused")
                connections = []
                for context in (b"ctx-aaaa", b"ctx-bbbb", b"ctx-cccc", b"ctx-dddd", b"ctx-eeee"):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(sys.argv[1])
                    s.settimeout(15)
                    browse(s, context)
                    connections.append(s)
                print("ready")
                for s in connections:
                    header = exactly(s, 28)
                    version, length, flags, op = struct.unpack(">IIII", header[:16])
                    body = exactly(s, length)
                    reply_flags, interface, error = struct.unpack(">IIi", body[:12])
                    name = body[12:].split(b"\0")[0].decode()
                    print("reply", header[16:24].decode(), "op", op, "add", reply_flags & 2 != 0, "error", error,
                          "name", name)
                """#, daemon.socket])
            defer { clients.terminate(grace: 1) }
            try clients.waitForOutput(containing: "ready", in: .stdout, timeout: 10)
            let register = try daemon.spawnHerald(["register", "Fan Out", "_hfan._tcp", "7500"])
            defer { register.terminate(grace: 1) }
            #expect(clients.waitForExit(timeout: 15) == 0, "\(clients.output)\nheraldd:\n\(daemon.log)")
            let replies = clients.stdout.split(separator: "\n").filter { $0.hasPrefix("reply ") }.map(String.init)
            let expected = ["ctx-aaaa", "ctx-bbbb", "ctx-cccc", "ctx-dddd", "ctx-eeee"].map {
                "reply \($0) op 66 add True error 0 name Fan Out"
            }
            #expect(replies == expected, "\(clients.output)")
        }
    }
}
