import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Local accounts for the hostile-user tests, created on first use (system accounts with no home and no shell):
/// the daemon's own user, as `heraldd.service` runs it, and two ordinary users who are not operators.
struct TestUser: Sendable {
    let name: String
    let uid: UInt32
    let gid: UInt32

    static let daemonName = "herald-test-daemon"
    static let aliceName = "herald-test-alice"
    static let bobName = "herald-test-bob"

    /// The account called `name`, created if it does not exist.
    static func ensure(_ name: String) throws -> TestUser {
        if let user = lookup(name) { return user }
        let created = try Command.run([
            try Requirements.requireExecutable("useradd"), "--system", "--no-create-home",
            "--user-group", "--shell", "/usr/sbin/nologin", name,
        ])
        // Another run may have created it meanwhile.
        guard let user = lookup(name) else { throw HarnessError.setup("cannot create the user \(name): \(created)") }
        return user
    }

    private static func lookup(_ name: String) -> TestUser? {
        guard let entry = getpwnam(name) else { return nil }
        return TestUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `argv` run as this user, with its own group only.
    func command(_ argv: [String]) throws -> [String] {
        [try Requirements.requireExecutable("setpriv"), "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"]
            + argv
    }

    /// `argv` run as this user with the one capability `heraldd.service` gives the daemon (CAP_SYS_PTRACE, to read
    /// other users' `/proc/PID/exe`), nothing else, and no way to gain more.
    func daemonCommand(_ argv: [String]) throws -> [String] {
        [
            try Requirements.requireExecutable("setpriv"), "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups",
            "--inh-caps=-all,+sys_ptrace", "--ambient-caps=-all,+sys_ptrace", "--bounding-set=-all,+sys_ptrace",
            "--no-new-privs", "--",
        ] + argv
    }
}

/// A heraldd confined as its unit runs it (its own user, CAP_SYS_PTRACE only), with its sockets, store and apps in
/// a permission test area, so that every user can reach the sockets and none but the daemon can write its files.
struct ConfinedDaemon {
    let daemon: HeraldDaemon
    let nssSocket: String

    static func start(on host: TestLAN.Host, area: PermissionTestArea, user: TestUser, arguments: [String] = [])
        throws -> ConfinedDaemon
    {
        let run = area.directory + "/run"
        let state = area.directory + "/state"
        let apps = area.directory + "/apps"
        for (path, mode, owner) in [(run, 0o755, user), (state, 0o700, user), (apps, 0o755, nil)]
            as [(String, Int, TestUser?)]
        {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            chmod(path, mode_t(mode))
            if let owner { chown(path, owner.uid, owner.gid) }
        }
        let nss = run + "/nss.sock"
        let daemon = try host.startHeraldd(
            arguments: [
                "--socket", run + "/dnssd.sock", "--control-socket", run + "/control.sock", "--state-dir", state,
                "--apps-dir", apps, "--nss-socket", nss,
            ] + arguments,
            launcher: try user.daemonCommand([]))
        return ConfinedDaemon(daemon: daemon, nssSocket: nss)
    }

    /// The daemon's resident memory now (VmRSS of `/proc/PID/status`), in KiB.
    var residentKiB: Int {
        guard let text = try? String(contentsOfFile: "/proc/\(daemon.process.pid)/status", encoding: .utf8) else {
            return -1
        }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return -1
    }
}

/// The attacker's tools, built once per area: `attacker` (CPrograms/attacker.c) and `preload.so` (preload.c).
struct AttackerTools {
    let attacker: String
    let preload: String

    init(in area: PermissionTestArea, host: TestLAN.Host) throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CPrograms").path
        attacker = area.directory + "/bin/attacker"
        preload = area.directory + "/bin/preload.so"
        try host.check(["cc", "-O1", "-o", attacker, sources + "/attacker.c"])
        try host.check(["cc", "-O1", "-shared", "-fPIC", "-o", preload, sources + "/preload.c"])
        chmod(attacker, 0o755)
        chmod(preload, 0o755)
    }
}
