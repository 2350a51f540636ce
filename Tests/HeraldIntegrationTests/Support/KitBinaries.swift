import Foundation

/// The executables built on HeraldKit that the tests run: `heraldkit-probe` (one library operation, JSON
/// lines out) and the `tictactoe` example, found next to `heraldd` (see `HeraldBinaries`).
enum KitBinaries {
    static func probe() throws -> String { try find("heraldkit-probe") }
    static func tictactoe() throws -> String { try find("tictactoe") }

    private static func find(_ name: String) throws -> String {
        let path = try HeraldBinaries.directory() + "/" + name
        guard access(path, X_OK) == 0 else {
            throw HarnessError.setup(
                "\(path) is missing; build it first (swift build --build-tests builds every product)")
        }
        return path
    }
}

extension HeraldDaemon {
    /// Starts `heraldkit-probe ARGS` in the daemon's host, finding the daemon through `DNSSD_UDS_PATH`.
    func spawnProbe(_ arguments: [String]) throws -> RunningProcess {
        try host.spawn([try KitBinaries.probe()] + arguments, environment: ["DNSSD_UDS_PATH": socket])
    }

    /// Runs `heraldkit-probe ARGS` in the daemon's host to completion.
    func probe(_ arguments: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        try host.run([try KitBinaries.probe()] + arguments, timeout: timeout, environment: ["DNSSD_UDS_PATH": socket])
    }

    /// How many app-socket connections the daemon holds open now (its accepted sockets, seen by `ss`).
    func openClientConnections() throws -> Int {
        let result = try host.check(["ss", "-x", "-H", "-a"])
        return result.stdout.split(separator: "\n").filter { line in
            line.contains(socket) && !line.contains("LISTEN")
        }.count
    }
}
