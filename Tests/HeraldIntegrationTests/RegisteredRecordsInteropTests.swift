import Foundation
import Testing

extension HeraldOnTestLANs {
    /// Records registered on their own through the app socket (DNSServiceRegisterRecord on a shared connection),
    /// as Avahi on another host sees them come and go.
    @Suite("Records registered through the app socket, as Avahi sees them", .serialized)
    struct RegisteredRecordsInteropTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "two unique address records registered on a shared connection resolve on a peer; one removed, then the other when the connection closes"
        )
        func registeredRecordsComeAndGo() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            let daemon = try local.startHeraldd()
            try peer.startAvahi()
            usleep(1_200_000)  // the daemon's host name is announced about a second after it starts
            let removeFlag = local.directory + "/remove-first"
            let closeFlag = local.directory + "/close"
            let client = try local.spawn([
                "python3", "-c", DNSSDByHand.python + Self.recordClient, daemon.socket,
                removeFlag, closeFlag,
            ])
            defer { client.terminate(grace: 1) }
            let both = waitUntil(timeout: 15) {
                client.stdout.contains("registered 0 0") && client.stdout.contains("registered 1 0")
            }
            #expect(
                both.held && client.stdout.contains("status connection 0")
                    && client.stdout.contains("status record 0 0")
                    && client.stdout.contains("status record 1 0"), "\(client.output)\n\(daemon.log)")

            // Both resolve on the peer.
            let first = try peer.run(["avahi-resolve", "-4", "-n", "herald-record-a.local"], timeout: 15)
            let second = try peer.run(["avahi-resolve", "-4", "-n", "herald-record-b.local"], timeout: 15)
            #expect(first.stdout == "herald-record-a.local\t10.213.99.1\n", "\(first)\n\(daemon.log)")
            #expect(second.stdout == "herald-record-b.local\t10.213.99.2\n", "\(second)\n\(daemon.log)")

            // Removing the first: its goodbye takes it off the peer; the second stays.
            try #require(
                FileManager.default.createFile(atPath: removeFlag, contents: Data()), "cannot create \(removeFlag)")
            _ = try client.waitForOutput(containing: "removed 0 0", in: .stdout, timeout: 10)
            usleep(2_000_000)  // goodbye, then one second in the peer's cache (RFC 6762 §10.1)
            let firstAfter = try peer.run(["avahi-resolve", "-4", "-n", "herald-record-a.local"], timeout: 15)
            #expect(!firstAfter.stdout.contains("10.213.99.1"), "\(firstAfter)\n\(daemon.log)")
            let secondStill = try peer.run(["avahi-resolve", "-4", "-n", "herald-record-b.local"], timeout: 15)
            #expect(secondStill.stdout == "herald-record-b.local\t10.213.99.2\n", "\(secondStill)\n\(daemon.log)")

            // Closing the connection withdraws the other.
            try #require(
                FileManager.default.createFile(atPath: closeFlag, contents: Data()), "cannot create \(closeFlag)")
            #expect(client.waitForExit(timeout: 10) == 0, "\(client.output)")
            usleep(2_000_000)
            let secondAfter = try peer.run(["avahi-resolve", "-4", "-n", "herald-record-b.local"], timeout: 15)
            #expect(!secondAfter.stdout.contains("10.213.99.2"), "\(secondAfter)\n\(daemon.log)")
            #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
        }

        @Test(
            "a record added to a service is seen by python-zeroconf on a peer, then its update, then its goodbye on removal"
        )
        func addedRecordComesAndGoes() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, peer) = (lan.hosts[0], lan.hosts[1])
            let daemon = try local.startHeraldd()
            let instance = "Added Records._hadd._tcp.local."
            let watch = try peer.startZeroconf(script: Self.hinfoWatcher, arguments: [instance])
            defer { watch.terminate(grace: 1) }
            try watch.waitForOutput(containing: "watching", in: .stdout, timeout: 15)
            usleep(1_200_000)
            let flags = ["update", "remove", "close"].map { local.directory + "/added-\($0)" }
            let client = try local.spawn(
                ["python3", "-c", DNSSDByHand.python + Self.addingClient, daemon.socket] + flags)
            defer { client.terminate(grace: 1) }
            func lastSeen() -> String { watch.stdout.split(separator: "\n").last.map(String.init) ?? "" }

            _ = try client.waitForOutput(containing: "added 0", in: .stdout, timeout: 15)
            #expect(
                client.stdout.contains("status register 0") && client.stdout.contains("registered 0"),
                "\(client.output)\n\(daemon.log)")
            #expect(
                waitUntil(timeout: 10) { lastSeen() == #"["Herald|Version 1"]"# }.held, "\(watch.stdout)\n\(daemon.log)"
            )

            // RFC 6762 §10.2: new data flushes only what a peer received more than a second earlier.
            usleep(1_200_000)
            try #require(
                FileManager.default.createFile(atPath: flags[0], contents: Data()), "cannot create \(flags[0])")
            _ = try client.waitForOutput(containing: "updated 0", in: .stdout, timeout: 10)
            #expect(
                waitUntil(timeout: 10) { lastSeen().contains("Herald|Version 2") }.held,
                "\(watch.stdout)\n\(daemon.log)")
            // The new data is announced with the cache-flush bit (a simulated-LAN test shows a peer's cache left with
            // the new data only); python-zeroconf sometimes keeps the old data beside it all the same.
            withKnownIssue(
                "python-zeroconf sometimes keeps the old HINFO data after the cache-flush announcement of the new",
                isIntermittent: true
            ) {
                #expect(waitUntil(timeout: 5) { lastSeen() == #"["Herald|Version 2"]"# }.held, "\(watch.stdout)")
            }

            try #require(
                FileManager.default.createFile(atPath: flags[1], contents: Data()), "cannot create \(flags[1])")
            _ = try client.waitForOutput(containing: "removed 0", in: .stdout, timeout: 10)
            #expect(
                waitUntil(timeout: 10) { !lastSeen().contains("Version 2") && lastSeen().hasPrefix("[") }.held,
                "the goodbye removed it: \(watch.stdout)\n\(daemon.log)")

            try #require(
                FileManager.default.createFile(atPath: flags[2], contents: Data()), "cannot create \(flags[2])")
            #expect(client.waitForExit(timeout: 10) == 0, "\(client.output)")
            #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
        }

        /// python-zeroconf, argv: NAME. Asks for NAME's HINFO records twice a second and prints the live ones it
        /// holds, as a sorted JSON list of "cpu|os".
        static let hinfoWatcher = #"""
            import json
            from zeroconf import DNSOutgoing, DNSQuestion, const, current_time_millis
            name = sys.argv[1]
            ready("watching")
            while True:
                out = DNSOutgoing(const._FLAGS_QR_QUERY)
                out.add_question(DNSQuestion(name, const._TYPE_HINFO, const._CLASS_IN))
                zc.send(out)
                time.sleep(0.5)
                now = current_time_millis()  # zeroconf's clock (monotonic)
                live = [r for r in zc.cache.entries_with_name(name.lower()) if r.type == const._TYPE_HINFO and not r.is_expired(now)]
                print(json.dumps(sorted(f"{r.cpu}|{r.os}" for r in live)), flush=True)
            """#

        /// After `DNSSDByHand.python`; argv: SOCKET UPDATE-FLAG REMOVE-FLAG CLOSE-FLAG. Registers
        /// `Added Records._hadd._tcp` (the connection's first request, status in band), adds an HINFO record to it,
        /// then updates it, removes it and closes as each flag file appears (statuses of the later requests on
        /// passed sockets).
        static let addingClient = #"""
            import os, socket, struct, sys, time
            path, update_flag, remove_flag, close_flag = sys.argv[1:5]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.settimeout(15)
            CONTEXT = b"service0"

            def header(length, op, index=0):
                return struct.pack(">IIII8sI", 1, length, 0, op, CONTEXT, index)

            def subordinate(op, index, body):
                body = b"\0" + body  # empty error-return path: the status comes back on a passed socket
                mine, theirs = socket.socketpair()
                socket.send_fds(s, [header(len(body), op, index) + body], [theirs.fileno()])
                theirs.close()
                mine.settimeout(15)
                value = status_of(mine)
                mine.close()
                return value

            def hinfo(os_name):
                return bytes([6]) + b"Herald" + bytes([len(os_name)]) + os_name.encode()

            def wait_for(flag):
                while not os.path.exists(flag):
                    time.sleep(0.05)

            body = struct.pack(">II", 0, 0) + b"Added Records\0_hadd._tcp\0\0\0" + struct.pack(">HH", 4242, 1) + b"\0"
            s.sendall(header(len(body), 5) + body)
            print("status register", status_of(s), flush=True)
            version, length, flags, op, context, index = struct.unpack(">IIII8sI", exactly(s, 28))
            reply = exactly(s, length)
            print("registered", struct.unpack(">i", reply[8:12])[0], flush=True)
            data = hinfo("Version 1")
            print("added", subordinate(10, 1, struct.pack(">IHH", 0, 13, len(data)) + data + struct.pack(">I", 4500)), flush=True)
            wait_for(update_flag)
            data = hinfo("Version 2")
            print("updated", subordinate(11, 1, struct.pack(">IH", 0, len(data)) + data + struct.pack(">I", 4500)), flush=True)
            wait_for(remove_flag)
            print("removed", subordinate(3, 1, struct.pack(">I", 0)), flush=True)
            wait_for(close_flag)
            s.close()
            """#

        /// After `DNSSDByHand.python`; argv: SOCKET REMOVE-FLAG CLOSE-FLAG. Speaks the dnssd IPC framing by hand (28-byte big-endian header):
        /// a shared connection, two unique A records (statuses on passed sockets), their register-record replies,
        /// then removes the first when REMOVE-FLAG exists and closes when CLOSE-FLAG does.
        static let recordClient = #"""
            import os, socket, struct, sys, time
            path, remove_flag, close_flag = sys.argv[1:4]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.settimeout(15)

            def header(length, op, context, index=0, flags=0):
                return struct.pack(">IIII8sI", 1, length, flags, op, context, index)

            def subordinate(op, context, index, body):
                # On an established connection the body starts with the error-return path; empty: a socket is passed.
                body = b"\0" + body
                mine, theirs = socket.socketpair()
                socket.send_fds(s, [header(len(body), op, context, index) + body], [theirs.fileno()])
                theirs.close()
                mine.settimeout(15)
                value = status_of(mine)
                mine.close()
                return value

            body = b""
            s.sendall(header(len(body), 1, b"shared00") + body)
            print("status connection", status_of(s), flush=True)
            UNIQUE = 0x20
            for index, (name, address) in enumerate([("herald-record-a.local.", bytes([10, 213, 99, 1])),
                                                     ("herald-record-b.local.", bytes([10, 213, 99, 2]))]):
                record = struct.pack(">II", UNIQUE, 0) + name.encode() + b"\0" + struct.pack(">HHH", 1, 1, 4) + address + struct.pack(">I", 120)
                print("status record", index, subordinate(2, b"record0" + str(index).encode(), index, record), flush=True)
            replies = 0
            while replies < 2:
                version, length, flags, op, context, index = struct.unpack(">IIII8sI", exactly(s, 28))
                body = exactly(s, length)
                if op == 69:
                    reply_flags, interface, error = struct.unpack(">IIi", body[:12])
                    print("registered", int(context[-1:]), error, flush=True)
                    replies += 1
            while not os.path.exists(remove_flag):
                time.sleep(0.05)
            print("removed 0", subordinate(3, b"shared00", 0, struct.pack(">I", 0)), flush=True)
            while not os.path.exists(close_flag):
                time.sleep(0.05)
            s.close()
            """#
    }
}
