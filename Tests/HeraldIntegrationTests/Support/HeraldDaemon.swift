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
    /// The operators' control socket.
    let controlSocket: String
    /// Where its permission store lives.
    let stateDirectory: String
    /// Its apps directory (manifests loaded at start and on SIGHUP).
    let appsDirectory: String

    fileprivate init(
        host: TestLAN.Host, process: RunningProcess, socket: String, hostName: String,
        controlSocket: String, stateDirectory: String, appsDirectory: String
    ) {
        self.host = host
        self.process = process
        self.socket = socket
        self.hostName = hostName
        self.controlSocket = controlSocket
        self.stateDirectory = stateDirectory
        self.appsDirectory = appsDirectory
    }

    /// The permission store's file.
    var storePath: String { stateDirectory + "/permissions.sqlite" }

    /// Runs an operator command, `herald ARGS --control-socket CONTROL`, in the host to completion.
    func control(_ arguments: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        try host.run([try HeraldBinaries.herald()] + arguments + ["--control-socket", controlSocket], timeout: timeout)
    }

    /// The daemon's log so far.
    var log: String { process.stderr }

    /// True once the daemon's log contains `needle`, waiting up to `timeout` seconds: a line the daemon wrote
    /// before answering a client may still be in the pipe when the client's command has returned.
    func logShows(_ needle: String, timeout: TimeInterval = 5) -> Bool {
        (try? process.waitForOutput(containing: needle, in: .stderr, timeout: timeout)) != nil
    }

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
    /// then being probed; it is announced about a second later. `binary` replaces the heraldd of this test build
    /// (the release build as installed, for instance); `launcher` is a command that runs it (its arguments first).
    func startHeraldd(
        hostName: String? = nil, interfaces: [String] = [], arguments: [String] = [],
        binary: String? = nil, launcher: [String] = []
    ) throws -> HeraldDaemon {
        let hostName = hostName ?? name
        let tag = UInt16.random(in: 0...UInt16.max)
        func value(of option: String, default fallback: String) -> String {
            guard let index = arguments.firstIndex(of: option), index + 1 < arguments.count else { return fallback }
            return arguments[index + 1]
        }
        let socket = value(of: "--socket", default: directory + "/heraldd-\(tag).sock")
        let controlSocket = value(of: "--control-socket", default: directory + "/control-\(tag).sock")
        let stateDirectory = value(of: "--state-dir", default: directory + "/state-\(tag)")
        let appsDirectory = value(of: "--apps-dir", default: directory + "/apps-\(tag)")
        try FileManager.default.createDirectory(atPath: appsDirectory, withIntermediateDirectories: true)
        var argv = launcher + [try binary ?? HeraldBinaries.heraldd(), "--hostname", hostName]
        for interface in interfaces { argv += ["--interface", interface] }
        for (option, path) in [
            ("--socket", socket), ("--control-socket", controlSocket), ("--state-dir", stateDirectory),
            ("--apps-dir", appsDirectory),
        ] where !arguments.contains(option) {
            argv += [option, path]
        }
        argv += arguments
        let process = try spawn(argv)
        let deadline = Date(timeIntervalSinceNow: 10)
        while !Self.accepts(socket) || !Self.accepts(controlSocket) {
            if !process.isRunning || Date() > deadline {
                process.terminate(grace: 1)
                throw HarnessError.setup("\(name): heraldd did not open its socket \(socket):\n\(process.output)")
            }
            usleep(10_000)
        }
        return HeraldDaemon(
            host: self, process: process, socket: socket, hostName: hostName, controlSocket: controlSocket,
            stateDirectory: stateDirectory, appsDirectory: appsDirectory)
    }
}

extension TestLAN.Host {
    /// True when something accepts connections on the Unix socket at `path` (a file left by a killed daemon
    /// does not count).
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
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
