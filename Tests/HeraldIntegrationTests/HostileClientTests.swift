import Foundation
import Testing

extension HeraldOnTestLANs {
    /// The app socket against clients that break the protocol: each is answered with the right error or
    /// dropped, the daemon logs it, and everyone else carries on.
    @Suite("heraldd against hostile app-socket clients", .serialized)
    struct HostileClientTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "malformed frames, wrong versions, huge lengths, unknown operations and idle clients leave heraldd serving")
        func hostileFrames() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startHeraldd()
            let result = try host.run(["python3", "-c", Self.hostileClient, daemon.socket], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            let lines = Set(result.stdout.split(separator: "\n").map(String.init))
            // Each case prints what the daemon did with it.
            #expect(lines.contains("wrong-version: closed"), "\(result.stdout)")
            #expect(lines.contains("huge-length: closed"), "\(result.stdout)")
            #expect(lines.contains("unknown-operation: status -65544"), "\(result.stdout)")
            #expect(lines.contains("bad-txt: status -65540"), "\(result.stdout)")
            // A TXT record too big for one message could be browsed but never resolved: refused at once.
            #expect(lines.contains("huge-txt: 14848 bytes: status -65540"), "\(result.stdout)")
            #expect(lines.contains("fitting-txt: 8448 bytes: status 0"), "\(result.stdout)")
            #expect(lines.contains("chaos-query: status -65540"), "\(result.stdout)")
            #expect(lines.contains("local-only-register: status -65544"), "\(result.stdout)")
            #expect(lines.contains("local-only-browse: status -65544"), "\(result.stdout)")
            #expect(lines.contains("addrinfo-unicast-name: status -65544"), "\(result.stdout)")
            #expect(lines.contains("addrinfo-bad-name: status -65540"), "\(result.stdout)")
            #expect(lines.contains("missing-nul: closed"), "\(result.stdout)")
            #expect(lines.contains("idle-clients: 200 open"), "\(result.stdout)")
            #expect(lines.contains("after: browse status 0"), "\(result.stdout)")
            #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
            #expect(daemon.logShows("dropping client"), "no log line for the dropped clients:\n\(daemon.log)")
            // And a well-behaved client still works end to end.
            let register = try daemon.spawnHerald(["register", "After The Storm", "_hhostile._tcp", "9000", "--json"])
            #expect(
                waitUntil(timeout: 10) { register.jsonLines.contains { $0["event"] as? String == "registered" } }.held,
                "\(register.output)\n\(daemon.log)")
            let resolved = try daemon.herald(["resolve", "After The Storm", "_hhostile._tcp", "--json"])
            #expect(
                resolved.status == 0 && HeraldJSON.objects(resolved.stdout).first?["port"] as? Int == 9000,
                "\(resolved)")
            register.send(SIGINT)
            register.waitForExit(timeout: 5)
        }

        @Test("a client that never reads its replies is dropped at its reply-buffer limit; the others carry on")
        func clientThatNeverReads() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let config = try host.writeFile(named: "small-buffer.conf", "[limits]\nclient-reply-buffer = 65536\n")
            let daemon = try host.startHeraldd(arguments: ["--config", config])
            let result = try host.run(["python3", "-c", Self.neverReads, daemon.socket], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("flooder: dropped"), "\(result)")
            #expect(result.stdout.contains("bystander: browse status 0"), "\(result)")
            #expect(daemon.logShows("does not read its replies"), "\(daemon.log)")
            #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
        }

        @Test("the status of a first request comes before an answer that was already cached")
        func statusBeforeCachedAnswer() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            let register = try daemon.spawnHerald(["register", "Cached", "_hcache._tcp", "7400"])
            defer { register.terminate(grace: 1) }
            try register.waitForOutput(containing: "Cached", in: .stdout, timeout: 10)
            let result = try lan.hosts[0].run([
                "python3", "-c",
                DNSSDByHand.python + #"""
                    s = connect()
                    s.settimeout(3)
                    request(s, 7, b"ctx-rslv", struct.pack(">II", 0, 0) + b"Cached\0_hcache._tcp\0local.\0")
                    print("status", status_of(s))
                    version, length, flags, op = struct.unpack(">IIII", exactly(s, 28)[:16])
                    print("reply version", version, "op", op)
                    """#, daemon.socket,
            ])
            #expect(result.stdout.contains("status 0"), "\(result)")
            #expect(result.stdout.contains("reply version 1 op 67"), "\(result)")
        }

        @Test(
            "error sockets: a named one that never accepts does not hold heraldd, descriptors passed by the hundred are not kept, and an unknown operation's status comes on its own"
        )
        func errorSocketAbuse() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startHeraldd()
            let result = try host.run(
                [
                    "python3", "-c", DNSSDByHand.python + Self.errorSocketAbuse, daemon.socket,
                    String(daemon.process.pid), host.directory,
                ], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("after named socket: browse status 0"), "\(result)\n\(daemon.log)")
            let counts =
                result.stdout.split(separator: "\n").first { $0.hasPrefix("descriptors:") }?
                .split(separator: " ").dropFirst().compactMap { Int($0) } ?? []
            // Before, while a connection has passed 720 descriptors with one frame (heraldd keeps four waiting at most),
            // and after that frame.
            try #require(counts.count == 3, "\(result)")
            #expect(counts[1] <= counts[0] + 4, "\(counts)")
            #expect(counts[2] <= counts[0], "\(counts)")
            #expect(result.stdout.contains("after passing: browse status 0"), "\(result)")
            #expect(result.stdout.contains("unknown on a shared connection: status -65544"), "\(result)")
            #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
        }

        /// argv: SOCKET PID DIRECTORY.
        static let errorSocketAbuse = #"""
            import os, time
            # A listener that accepts nothing, its backlog already full: a blocking connect to it never returns.
            path = sys.argv[3] + "/never-accepts.sock"
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            listener.listen(0)
            filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            filler.setblocking(False)
            filler.connect(path)
            s = connect()
            request(s, 1, b"ctx-conn", b"")
            expect_status(s)
            # A browse on the shared connection, its status to go to that socket.
            request(s, 6, b"ctx-nmed", path.encode() + b"\0" + browse_body("_hnamed._tcp"))
            time.sleep(0.5)
            other = connect()
            other.settimeout(5)
            request(other, 6, b"ctx-aft1", browse_body("_hafter._tcp"))
            print("after named socket: browse status %d" % status_of(other), flush=True)

            def descriptors():
                return len(os.listdir("/proc/%s/fd" % sys.argv[2]))
            passer = connect()
            request(passer, 1, b"ctx-conn", b"")
            expect_status(passer)
            before = descriptors()
            # One frame (a browse that asks for no error socket), a byte at a time, each byte with twelve descriptors.
            body = browse_body("_hpassed._tcp")
            frame = struct.pack(">IIII8sI", 1, len(body), 4, 6, b"ctx-pass", 0) + body
            spare = os.open("/dev/null", os.O_RDONLY)
            for byte in frame[:-1]:
                socket.send_fds(passer, [bytes([byte])], [spare] * 12)
            time.sleep(0.5)
            during = descriptors()
            socket.send_fds(passer, [frame[-1:]], [spare] * 12)
            time.sleep(0.5)
            print("descriptors: %d %d %d" % (before, during, descriptors()), flush=True)
            other = connect()
            other.settimeout(5)
            request(other, 6, b"ctx-aft2", browse_body("_hafter._tcp"))
            print("after passing: browse status %d" % status_of(other), flush=True)

            # An operation the daemon does not know, on a shared connection: its status comes on the socket passed with it.
            shared = connect()
            request(shared, 1, b"ctx-conn", b"")
            expect_status(shared)
            ours, theirs = socket.socketpair()
            frame = struct.pack(">IIII8sI", 1, 1, 0, 99, b"ctx-unkn", 0) + b"\0"
            shared.sendall(frame[:-1])
            socket.send_fds(shared, [frame[-1:]], [theirs.fileno()])
            theirs.close()
            ours.settimeout(5)
            print("unknown on a shared connection: status %d" % struct.unpack(">i", exactly(ours, 4))[0], flush=True)
            """#

        @Test(
            "out of file descriptors: extra connections are shed without a busy loop, and the daemon serves again after"
        )
        func outOfDescriptors() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let prlimit = try Requirements.requireExecutable("prlimit")
            let socket = host.directory + "/few-fds.sock"
            let daemonProcess = try host.spawn([
                prlimit, "--nofile=64:64", try HeraldBinaries.heraldd(), "--hostname", "fewfds",
                "--socket", socket, "--control-socket", host.directory + "/few-fds-control.sock",
                "--state-dir", host.directory + "/few-fds-state",
            ])
            defer { daemonProcess.terminate(grace: 1) }
            #expect(waitUntil(timeout: 10) { TestLAN.Host.accepts(socket) }.held, "\(daemonProcess.output)")
            let result = try host.run(["python3", "-c", Self.exhaust, socket, String(daemonProcess.pid)], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemonProcess.output)")
            let cpu =
                result.stdout.split(separator: "\n").first { $0.hasPrefix("cpu while exhausted:") }
                .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 100
            #expect(cpu < 0.5, "heraldd spun while out of descriptors: \(result.stdout)")
            #expect(result.stdout.contains("after: browse status 0"), "\(result.stdout)")
            #expect(daemonProcess.isRunning)
        }

        /// argv: SOCKET PID. Opens 200 connections to a daemon allowed 64 descriptors, measures its CPU seconds
        /// per second over 2 s, closes them, and browses.
        static let exhaust = #"""
            import socket, struct, sys, time
            path, pid = sys.argv[1], sys.argv[2]
            def cpu():
                fields = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / 100.0
            held = []
            for _ in range(200):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(2)
                try:
                    s.connect(path)
                    held.append(s)
                except OSError:
                    s.close()
            time.sleep(0.5)
            before = cpu()
            time.sleep(2)
            print("cpu while exhausted: %.2f" % ((cpu() - before) / 2), flush=True)
            for s in held:
                s.close()
            time.sleep(0.5)
            body = struct.pack(">II", 0, 0) + b"_hfewfds._tcp\0" + b"\0"
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.settimeout(3)
            s.sendall(struct.pack(">IIII8sI", 1, len(body), 0, 6, b"ctx-fdsx", 0) + body)
            print("after: browse status %d" % struct.unpack(">i", s.recv(4))[0], flush=True)
            """#

        /// argv: SOCKET. Opens a shared connection and sends domain-enumeration requests (each answered with a
        /// reply on the connection) without ever reading, until the daemon drops it; then a second client browses.
        static let neverReads = #"""
            import socket, struct, sys
            path = sys.argv[1]

            def header(length, op, flags=0, context=b"ctx-flod"):
                return struct.pack(">IIII8sI", 1, length, flags, op, context, 0)

            flooder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            flooder.connect(path)
            flooder.sendall(header(0, 1))
            assert struct.unpack(">i", flooder.recv(4))[0] == 0
            flooder.settimeout(5)
            try:
                for n in range(200000):
                    # ipc_flags 4: no error socket; the status would come as an async reply on this connection.
                    flooder.sendall(header(8, 4, flags=4, context=struct.pack(">Q", n)) + struct.pack(">II", 0, 0))
                print("flooder: never dropped")
            except (BrokenPipeError, ConnectionResetError, socket.timeout) as error:
                print("flooder: dropped after", n, "requests", type(error).__name__)

            bystander = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            bystander.connect(path)
            body = struct.pack(">II", 0, 0) + b"_hnoread._tcp\0" + b"\0"
            bystander.sendall(header(len(body), 6) + body)
            bystander.settimeout(3)
            print("bystander: browse status %d" % struct.unpack(">i", bystander.recv(4))[0])
            """#

        /// argv: SOCKET. Speaks the dnssd IPC framing by hand (28-byte big-endian header) and prints one line per case.
        static let hostileClient = #"""
            import socket, struct, sys, time
            path = sys.argv[1]

            def connect():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                s.settimeout(3)
                return s

            def header(length, op, version=1, flags=0):
                return struct.pack(">IIII8sI", version, length, flags, op, b"ctx-hstl", 0)

            def outcome(s):
                try:
                    data = s.recv(4)
                except socket.timeout:
                    return "no answer"
                except ConnectionResetError:
                    return "closed"
                if len(data) == 0:
                    return "closed"
                if len(data) < 4:
                    return "short"
                return "status %d" % struct.unpack(">i", data)[0]

            def cstr(text):
                return text.encode() + b"\0"

            # A header with protocol version 7.
            s = connect(); s.sendall(header(0, 6, version=7)); print("wrong-version:", outcome(s)); s.close()
            # A length far beyond anything the protocol allows.
            s = connect(); s.sendall(header(0x7FFFFFF0, 6)); print("huge-length:", outcome(s)); s.close()
            # An operation code that does not exist.
            s = connect(); s.sendall(header(0, 99)); print("unknown-operation:", outcome(s)); s.close()
            # A registration whose TXT length byte runs past its data.
            txt = b"\x20short"
            body = struct.pack(">II", 0, 0) + cstr("Bad TXT") + cstr("_hhostile._tcp") + cstr("") + cstr("") \
                + struct.pack(">H", 9000) + struct.pack(">H", len(txt)) + txt
            s = connect(); s.sendall(header(len(body), 5) + body); print("bad-txt:", outcome(s)); s.close()
            # Valid TXT records: one too big for any mDNS message (58 entries of 256 bytes), one that fits (33).
            def register_with_txt(name, entries):
                txt = b"".join(bytes([255]) + b"k%02d=" % i + b"v" * 251 for i in range(entries))
                body = struct.pack(">II", 0, 0) + cstr(name) + cstr("_hhostile._tcp") + cstr("") + cstr("") \
                    + struct.pack(">H", 9000) + struct.pack(">H", len(txt)) + txt
                s = connect(); s.sendall(header(len(body), 5) + body); result = outcome(s); s.close()
                return "%d bytes: %s" % (len(txt), result)
            print("huge-txt:", register_with_txt("Huge TXT", 58))
            print("fitting-txt:", register_with_txt("Fitting TXT", 33))
            # A record query of class CH (3): multicast DNS has class IN only.
            body = struct.pack(">II", 0, 0) + cstr("hostile.local") + struct.pack(">HH", 1, 3)
            s = connect(); s.sendall(header(len(body), 8) + body); print("chaos-query:", outcome(s)); s.close()
            # Local-only (interface index -1) would be served on the network, visible to every host: Unsupported.
            body = struct.pack(">II", 0, 0xFFFFFFFF) + cstr("Local Only") + cstr("_hhostile._tcp") + cstr("") + cstr("") \
                + struct.pack(">HH", 9000, 0)
            s = connect(); s.sendall(header(len(body), 5) + body); print("local-only-register:", outcome(s)); s.close()
            body = struct.pack(">II", 0, 0xFFFFFFFF) + cstr("_hhostile._tcp") + cstr("")
            s = connect(); s.sendall(header(len(body), 6) + body); print("local-only-browse:", outcome(s)); s.close()
            # Address lookups: a name outside .local. needs unicast DNS (Unsupported); an empty label is no name at all.
            for label, hostname in (("addrinfo-unicast-name", "example.com"), ("addrinfo-bad-name", "a..local")):
                body = struct.pack(">III", 0, 0, 1) + cstr(hostname)
                s = connect(); s.sendall(header(len(body), 15) + body); print(label + ":", outcome(s)); s.close()
            # A browse whose strings never end.
            body = struct.pack(">II", 0, 0) + b"_http._tcp_without_a_terminator"
            s = connect(); s.sendall(header(len(body), 6) + body); print("missing-nul:", outcome(s)); s.close()
            # A header cut short, then gone.
            s = connect(); s.sendall(header(10, 6)[:11]); s.close()
            # Random bytes.
            s = connect(); s.sendall(bytes(range(256)) * 4); s.close()
            # Many clients that connect and say nothing.
            idle = [connect() for _ in range(200)]
            print("idle-clients: %d open" % len(idle))
            # A normal browse still gets its status while they wait.
            body = struct.pack(">II", 0, 0) + cstr("_hhostile._tcp") + cstr("")
            s = connect(); s.sendall(header(len(body), 6) + body); print("after: browse", outcome(s)); s.close()
            for c in idle:
                c.close()
            """#
    }
}
