import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `heraldd` running in a TestLAN host, with its app socket in the host's directory, and the way to
/// run `herald` against it inside the same host (so that interface names resolve there).
final class HeraldDaemon: @unchecked Sendable {
    let host: TestLAN.Host
    let process: RunningProcess
    /// The app socket (visible inside and outside the host: it lives under /tmp).
    let socket: String
    /// The host name it was started with (it publishes `<hostName>.local`, or `<hostName>-2.local` after a conflict).
    let hostName: String

    fileprivate init(host: TestLAN.Host, process: RunningProcess, socket: String, hostName: String) {
        self.host = host
        self.process = process
        self.socket = socket
        self.hostName = hostName
    }

    /// The daemon's log so far.
    var log: String { process.stderr }

    /// Runs `herald ARGS --socket SOCKET` in the host to completion.
    func herald(_ arguments: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        try host.run([try HeraldBinaries.herald()] + arguments + ["--socket", socket], timeout: timeout)
    }

    /// Starts `herald ARGS --socket SOCKET` in the host without waiting.
    func spawnHerald(_ arguments: [String]) throws -> RunningProcess {
        try host.spawn([try HeraldBinaries.herald()] + arguments + ["--socket", socket])
    }

    /// Stops the daemon (SIGTERM: goodbyes) and returns its exit status.
    @discardableResult
    func stop() -> Int32? { process.terminate(grace: 3) }
}

extension TestLAN.Host {
    /// Starts `heraldd --hostname NAME --socket DIR/heraldd-N.sock` (plus `--interface` for each of
    /// `interfaces`, default none: every interface) and waits until its socket exists. Its host name is
    /// then being probed; it is announced about a second later.
    func startHeraldd(hostName: String? = nil, interfaces: [String] = [], arguments: [String] = []) throws -> HeraldDaemon {
        let hostName = hostName ?? name
        let socket = directory + "/heraldd-\(UInt16.random(in: 0...UInt16.max)).sock"
        var argv = [try HeraldBinaries.heraldd(), "--hostname", hostName, "--socket", socket]
        for interface in interfaces { argv += ["--interface", interface] }
        argv += arguments
        let process = try spawn(argv)
        let deadline = Date(timeIntervalSinceNow: 10)
        while access(socket, F_OK) != 0 {
            if !process.isRunning || Date() > deadline {
                process.terminate(grace: 1)
                throw HarnessError.setup("\(name): heraldd did not open its socket \(socket):\n\(process.output)")
            }
            usleep(10_000)
        }
        return HeraldDaemon(host: self, process: process, socket: socket, hostName: hostName)
    }
}

/// The JSON lines `herald --json` prints, decoded loosely.
enum HeraldJSON {
    /// Every line of `text` that is a JSON object.
    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }
}
