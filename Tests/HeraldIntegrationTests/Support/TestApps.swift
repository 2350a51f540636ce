import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A place for permission tests that an unprivileged user can reach: a world-traversable directory (the
/// TestLAN's own directories are private to root) holding the daemon's app socket and the apps' binaries.
/// Removed by `remove()`.
final class PermissionTestArea: @unchecked Sendable {
    let directory: String

    init() throws {
        var template = Array("/tmp/herald-permissions-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError.setup("mkdtemp failed: errno \(errno)") }
        directory = String(cString: made)
        chmod(directory, 0o755)
        try FileManager.default.createDirectory(
            atPath: directory + "/bin", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
    }

    /// The app socket path to give heraldd (`--socket`), reachable by every user.
    var appSocket: String { directory + "/dnssd.sock" }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Installs a copy of the `herald` tool at `bin/NAME` to play an app: the kernel reports that path as the
    /// process's executable, which is what a manifest names.
    func installApp(named name: String) throws -> String {
        let path = directory + "/bin/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: try HeraldBinaries.herald(), toPath: path)
        chmod(path, 0o755)
        return path
    }

    /// Installs a copy of the system's Python interpreter at `bin/NAME`, to play an app written as a script (the
    /// copy is then the executable its manifest names). The system's, because the app user must be able to read its
    /// library, which a per-user installation such as pyenv's keeps private.
    func installPython(named name: String) throws -> String {
        let path = directory + "/bin/" + name
        let interpreter = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        guard FileManager.default.isExecutableFile(atPath: interpreter) else {
            throw HarnessError.setup("no system Python at /usr/bin/python3 (apt-get install python3)")
        }
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: interpreter, toPath: path)
        chmod(path, 0o755)
        return path
    }

    /// Writes a manifest file and returns its path.
    func writeManifest(_ fields: [String: Any], named name: String = "app.json") throws -> String {
        let path = directory + "/" + name
        let data = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .prettyPrinted])
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Installs the tic-tac-toe app (a copy of `herald` at `bin/tictactoe`) and registers its manifest with
    /// `daemon` (not granted); returns the app's path.
    func registerTicTacToe(on daemon: HeraldDaemon) throws -> String {
        let app = try installApp(named: "tictactoe")
        try daemon.control(["app", "add", try ticTacToeManifest(executable: app)]).expectSuccess()
        return app
    }

    /// The tic-tac-toe manifest (docs/permissions.md, "The app manifest") for the app at `executable`; `usage: nil`
    /// leaves the description out.
    func ticTacToeManifest(
        executable: String, usage: String? = "Tic Tac Toe looks for players on your local network.",
        types: [String] = ["_tictactoe._tcp"], extra: [String: Any] = [:]
    ) throws -> String {
        var fields: [String: Any] = [
            "id": "org.example.tictactoe", "name": "Tic Tac Toe", "executables": [executable],
            "NSBonjourServices": types,
        ]
        if let usage { fields["NSLocalNetworkUsageDescription"] = usage }
        fields.merge(extra) { $1 }
        return try writeManifest(fields, named: "tictactoe.json")
    }
}

/// The unprivileged user the permission tests run apps as (not root, not in any operator group).
enum AppUser {
    static let uid = 65534
    static let gid = 65534

    /// `argv` run as that user, with no supplementary groups.
    static func command(_ argv: [String]) throws -> [String] {
        [try Requirements.requireExecutable("setpriv"), "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"]
            + argv
    }
}

extension TestLAN.Host {
    /// Starts heraldd for permission tests with its sockets and store in `area`, where unprivileged processes
    /// can reach them (what they may do there is the daemon's and the file modes' business).
    func startPermissionDaemon(area: PermissionTestArea, arguments: [String] = [], launcher: [String] = [])
        throws -> HeraldDaemon
    {
        try startHeraldd(
            arguments: [
                "--socket", area.appSocket, "--control-socket", area.directory + "/control.sock",
                "--state-dir", area.directory + "/state",
            ] + arguments, launcher: launcher)
    }

    /// Runs `executable ARGS --socket SOCKET` as the unprivileged app user, to completion.
    func runApp(_ executable: String, _ arguments: [String], daemon: HeraldDaemon, timeout: TimeInterval = 20) throws
        -> CommandResult
    {
        let command = try AppUser.command([executable] + arguments + ["--socket", daemon.socket])
        let result = try run(command, timeout: timeout)
        // A binary just copied can be busy for a moment: a process another test thread forked meanwhile holds the
        // copy's descriptor until it execs. Once more, then.
        guard result.status == 126, result.stderr.contains("Text file busy") else { return result }
        usleep(200_000)
        return try run(command, timeout: timeout)
    }

    /// Starts `executable ARGS --socket SOCKET` as the unprivileged app user.
    func spawnApp(_ executable: String, _ arguments: [String], daemon: HeraldDaemon) throws -> RunningProcess {
        try spawn(try AppUser.command([executable] + arguments + ["--socket", daemon.socket]))
    }
}
