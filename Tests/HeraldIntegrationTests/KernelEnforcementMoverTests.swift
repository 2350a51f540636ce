import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sockets made before a process moved (docs/enforcement.md, "Sockets made before a process moved"): a process of
/// the app user makes its sockets outside the app's cgroup, where nothing holds it back, and is then moved into
/// the cgroup of an app that is not granted. Its earlier sockets carry the cgroup they were made in, which the nft
/// rules let through; the moved-socket programs judge them by the process instead.
extension KernelEnforcementTests {
    @Test("A process moved into a held-back app's cgroup cannot use the sockets it made before, until granted")
    func movedProcess() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let daemon = try lab.startDaemon()
        let mover = try lab.startOutsideAppCgroup(
            script: Self.moverScript, named: "mover.py",
            arguments: [lab.peerAddress, EnforcementLab.outside, lab.hostAddress])
        try mover.waitForOutput(containing: "pid ", timeout: 10)
        guard let pid = mover.stdout.split(separator: "\n").first(where: { $0.hasPrefix("pid ") })?.dropFirst(4)
        else { throw HarnessError.setup("the mover did not say its pid: \(mover.output)") }

        // Outside the app's cgroup every path is open, the earlier sockets' and new ones'.
        let open = "old_udp=ok old_tcp=ok old_outside=ok old_mcast=sent old_dns=ok old_lo=sent new_tcp=ok conn_udp=ok"
        #expect(try lab.waitForRound(of: mover, open) != nil, "before the move: \(mover.output.suffix(800))")
        #expect(mover.stdout.contains("held ok"), "the connection made before the move works: \(mover.output)")

        // Moved into the app's cgroup, not granted: the earlier sockets can reach only loopback and port 53, new
        // sockets meet the rules, and the connections made before the move end within a second.
        let beforeMove = mover.stdout.count
        let moved = Date()
        try lab.host.check(["sh", "-c", "echo \(pid) > \(lab.cgroup)/cgroup.procs"])
        let broken = waitUntil(timeout: 3) { mover.stdout.dropFirst(beforeMove).contains("held broken") }
        let delay = Date().timeIntervalSince(moved)
        #expect(broken.held && delay < 1.0, "the connection made before the move ended \(delay) s after it")
        let held = try lab.waitForRound(
            of: mover,
            "old_udp=EPERM old_tcp=EPERM old_outside=EPERM old_mcast=EPERM old_dns=ok old_lo=sent "
                + "new_tcp=ECONNREFUSED conn_udp=EPERM",
            after: beforeMove)
        #expect(held != nil, "moved, not granted: \(mover.output.suffix(800))")
        let status = try daemon.control(["status"])
        #expect(status.stdout.contains("sockets made before a move judged by their caller ("), "\(status)")
        #expect(status.stdout.contains(", 2 connections ended)"), "\(status)")
        #expect(daemon.log.contains("made before it moved into system.slice/"), "\(daemon.log.suffix(800))")

        // Granted without the multicast entitlement: the earlier sockets reach the LAN again, but not its groups.
        let beforeGrant = mover.stdout.count
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        let granted = try lab.waitForRound(
            of: mover,
            "old_udp=ok old_tcp=ok old_outside=ok old_mcast=EPERM old_dns=ok old_lo=sent new_tcp=ok conn_udp=ok",
            after: beforeGrant, timeout: 3)
        #expect(granted != nil, "granted without multicast: \(mover.output.suffix(800))")

        // Denied: held back again.
        let beforeDeny = mover.stdout.count
        try daemon.control(["deny", EnforcementLab.appID]).expectSuccess()
        let denied = try lab.waitForRound(
            of: mover, "old_udp=EPERM old_tcp=EPERM", after: beforeDeny, timeout: 3)
        #expect(denied != nil, "denied: \(mover.output.suffix(800))")

        // A clean fail-open stop takes the programs with the table: everything is open again.
        let beforeStop = mover.stdout.count
        #expect(daemon.stop() == 0, "\(daemon.log)")
        let stopped = try lab.waitForRound(of: mover, open, after: beforeStop)
        #expect(stopped != nil, "after heraldd stopped: \(mover.output.suffix(800))")
    }

    @Test("A kernel that cannot load the BPF programs: the nft rules still hold the app back, and heraldd says so")
    func withoutBPFPrograms() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let launcher = lab.host.directory + "/without_bpf_programs"
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("CPrograms/without_bpf_programs.c").path
        try lab.host.check(["cc", "-O1", "-o", launcher, source])
        let daemon = try lab.startDaemon(launcher: [launcher, String(EINVAL)])
        let agent = try lab.startAgent()
        let held = try lab.waitForRound(of: agent, "tcp=ECONNREFUSED udp=EPERM mcast=EPERM bcast=EPERM dns=ok")
        #expect(held != nil, "the rules hold the app back: \(agent.output.suffix(800))")
        let log = daemon.log
        #expect(
            log.contains(
                "enforcement: incoming multicast and broadcast reach held-back apps: the kernel cannot load the cgroup "
                    + "ingress program (BPF_PROG_TYPE_CGROUP_SKB): Invalid argument"),
            "\(log)")
        #expect(
            log.contains(
                "enforcement: sockets made before a process moved keep their first standing: the kernel cannot load "
                    + "the moved-socket programs (BPF_PROG_TYPE_CGROUP_SOCK_ADDR): Invalid argument"),
            "\(log)")
        let status = try daemon.control(["status"])
        #expect(
            status.stdout.contains("incoming multicast and broadcast NOT held back: the kernel cannot"), "\(status)")
        #expect(
            status.stdout.contains("sockets made before a move NOT judged by their caller: the kernel"), "\(status)")
        #expect(try lab.ingressPrograms() == 0)
    }

    /// Makes a UDP socket and a pool of TCP sockets first, then every 0.2 s a round: the UDP socket to the peer's
    /// echo, its DNS port, the SSDP group and loopback; one pooled TCP socket each to the peer and to the outside
    /// address; and a TCP socket made in the round, each printed as ok (sent) or the error's name.
    static let moverScript = """
        import errno, os, socket, sys, threading, time
        peer, outside, own = sys.argv[1:4]
        def name(e):
            if isinstance(e, socket.timeout): return "timeout"
            if isinstance(e, OSError) and e.errno: return errno.errorcode.get(e.errno, str(e.errno))
            return type(e).__name__
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.settimeout(0.5)
        udp.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(own))
        pool = [socket.socket() for _ in range(400)]
        connected = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); connected.settimeout(0.5)
        connected.connect((peer, 7001))
        def conn_udp():
            try:
                connected.send(b"hi"); d = connected.recv(64)
                return "ok" if d == b"hi" else "bad"
            except Exception:
                try: connected.connect((peer, 7001)); return "reconnected"
                except Exception as e: return name(e)
        def held():
            s = socket.create_connection((peer, 7000), timeout=1)
            while True:
                try:
                    s.sendall(b"ping"); d = s.recv(16)
                    if not d: raise ConnectionResetError(errno.ECONNRESET, "closed")
                    print("held ok", flush=True)
                except Exception as e:
                    print("held broken " + name(e), flush=True)
                    return
                time.sleep(0.1)
        threading.Thread(target=held, daemon=True).start()
        print("pid %d" % os.getpid(), flush=True)
        def echo(address):
            try:
                udp.sendto(b"hi", address); d, _ = udp.recvfrom(64)
                return "ok" if d == b"hi" else "bad"
            except Exception as e: return name(e)
        def send(address):
            try: udp.sendto(b"hi", address); return "sent"
            except Exception as e: return name(e)
        def tcp(s, host):
            s.settimeout(1)
            try:
                s.connect((host, 7000)); s.sendall(b"hi"); d = s.recv(16)
                return "ok" if d == b"hi" else "bad"
            except Exception as e: return name(e)
            finally: s.close()
        n = 0
        while len(pool) >= 2:
            n += 1
            print("round %d old_udp=%s old_tcp=%s old_outside=%s old_mcast=%s old_dns=%s old_lo=%s new_tcp=%s "
                  "conn_udp=%s"
                  % (n, echo((peer, 7001)), tcp(pool.pop(), peer), tcp(pool.pop(), outside),
                     send(("239.255.255.250", 1900)), echo((peer, 53)), send(("127.0.0.1", 9)),
                     tcp(socket.socket(), peer), conn_udp()), flush=True)
            time.sleep(0.2)
        print("pool empty", flush=True)
        """
}

extension EnforcementLab {
    /// Runs `script` with the system's python3 as the app user, in the test's own cgroup (no app's).
    func startOutsideAppCgroup(script: String, named name: String, arguments: [String]) throws -> RunningProcess {
        let path = area.directory + "/" + name
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        return try host.spawn(try AppUser.command(["/usr/bin/python3", "-u", path] + arguments))
    }
}
