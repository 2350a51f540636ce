import CHeraldSystem
import HeraldBroker

#if canImport(Glibc)
    import Glibc
#endif

/// Establishes who is asking from the kernel's records only (docs/permissions.md, "Who is asking").
///
/// An app is the program that **made** a connection, fixed when the daemon accepts it: the connecting process's
/// executable, unit, content digest and program image (``ConnectingProgram``). Each request is then judged by the
/// process that **sent** it, which the kernel attaches to every message: only the connecting process itself, still
/// running the program it connected with, passes as that app. Anyone else on the connection (a child it forked, a
/// process it handed the socket to, the process itself after an `exec`) is judged as a process of no app, with its
/// own current credentials, so an operator stays an operator and a process that dropped root does not.
final class CallerInspector {
    private let processes: ProcessInspector
    let digests: ExecutableDigests

    init(processes: ProcessInspector = .system, digests: ExecutableDigests = ExecutableDigests()) {
        self.processes = processes
        self.digests = digests
    }

    /// What is fixed about the process that connected, read as the connection is accepted; nil when it cannot be
    /// established (the process is gone, or `/proc` cannot be read), and then the connection is of no app.
    /// `digest` is the executable's SHA-256 when a manifest pins its path and it is known already.
    func identifyConnection(_ peer: ClientIdentity, needsDigest: (String) -> Bool) -> ConnectingProgram? {
        // Without a pidfd, nothing tells the process that connected from a later one given its pid.
        guard peer.pid > 0, peer.pidfd != nil, peer.processIsAlive else { return nil }
        guard let image = try? processes.programImage(of: peer.pid),
            let credentials = try? processes.credentials(of: peer.pid)
        else { return nil }
        var executable = try? processes.executable(of: peer.pid)
        if executable != nil, let settings = processes.loaderSettings(of: peer.pid, readMemory: Self.readMemory) {
            executable?.foreignCode = settings.injecting.map { "started with \($0)" }
            executable?.librariesFromElsewhere = settings.libraryPath
        }
        if executable != nil, let tracer = try? processes.tracer(of: peer.pid), tracer != 0 {
            executable?.foreignCode = "traced by pid \(tracer)"
        }
        let unit: SystemdUnit?
        do {
            unit = try processes.systemdUnit(of: peer.pid)
        } catch {
            return nil
        }
        var digest: SHA256Digest?
        var needsHashing = false
        var digestUnavailable: String?
        if let executable, executable.namesRunningFile, needsDigest(executable.path) {
            switch digests.known(forExecutableOf: peer.pid, root: processes.procRoot) {
            case .known(let known): digest = known
            case .unknown: needsHashing = true
            case .unavailable(let reason): digestUnavailable = reason
            }
        }
        // Everything read above belongs to the connecting process only if it still runs that program now.
        guard peer.processIsAlive, (try? processes.programImage(of: peer.pid)) == image else { return nil }
        let caller = CallerIdentity(
            pid: peer.pid, uid: credentials.uid, groups: credentials.groups,
            executable: executable, executableSHA256: digest, systemdUnit: unit)
        return ConnectingProgram(
            caller: caller, image: image, needsHashing: needsHashing,
            digestUnavailable: digestUnavailable)
    }

    /// The caller of one request: the process that sent it (`sender`, as the kernel attached it), judged as the
    /// connection's app only when it is the connecting process still running the program it connected with.
    func caller(of peer: ClientIdentity, connection: ConnectingProgram?, sender: UnixSocket.Sender?)
        -> (caller: CallerIdentity, note: String?)
    {
        guard let sender else {
            // Sent before the daemon asked the kernel for senders: on a socket the service manager made without
            // PassCredentials=yes, before the daemon started. Who wrote it is unknown, so it is judged as no app,
            // with the connecting process's current credentials for the operator rule.
            let note = "the request came without its sender (a socket passed without PassCredentials=yes)"
            guard peer.pid > 0, peer.processIsAlive, let credentials = try? processes.credentials(of: peer.pid),
                peer.processIsAlive
            else { return (CallerIdentity(pid: nil, uid: UInt32.max), note) }
            return (CallerIdentity(pid: peer.pid, uid: credentials.uid, groups: credentials.groups), note)
        }
        if sender.pid == peer.pid, peer.processIsAlive {
            guard let credentials = try? processes.credentials(of: peer.pid), peer.processIsAlive else {
                return (CallerIdentity(pid: sender.pid, uid: sender.uid, groups: [sender.gid]), nil)
            }
            var caller = CallerIdentity(pid: sender.pid, uid: credentials.uid, groups: credentials.groups)
            guard let connection else { return (caller, nil) }
            guard stillRuns(connection, peer: peer) else {
                return (caller, "pid \(peer.pid) has started another program since it connected")
            }
            caller.executable = connection.caller.executable
            caller.executableSHA256 = connection.caller.executableSHA256
            caller.systemdUnit = connection.caller.systemdUnit
            return (caller, nil)
        }
        // Another process: the connection's app does not pass to it. Its credentials are read where its pidfd
        // proves the pid still names it, else the kernel's word at sending time stands.
        let note =
            sender.pid == peer.pid
            ? "pid \(peer.pid), which connected, has exited"
            : "sent by pid \(sender.pid), not by pid \(peer.pid), which connected"
        if let pidfd = sender.pidfd, let credentials = try? processes.credentials(of: sender.pid),
            herald_pidfd_alive(pidfd) == 1
        {
            return (CallerIdentity(pid: sender.pid, uid: credentials.uid, groups: credentials.groups), note)
        }
        return (CallerIdentity(pid: sender.pid, uid: sender.uid, groups: [sender.gid]), note)
    }

    /// `range` of the memory of process `pid`; nil when it cannot be read.
    static func readMemory(_ pid: Int32, _ range: Range<UInt64>) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: Int(range.count))
        let count = bytes.withUnsafeMutableBytes {
            herald_read_process_memory(pid, UInt(range.lowerBound), $0.baseAddress, UInt($0.count))
        }
        guard count >= 0 else { return nil }
        return Array(bytes[0..<count])
    }

    /// True while the connecting process runs and runs the program it connected with.
    func stillRuns(_ connection: ConnectingProgram, peer: ClientIdentity) -> Bool {
        guard peer.processIsAlive, let now = try? processes.programImage(of: peer.pid) else { return false }
        return connection.image.isSameProgram(as: now) && peer.processIsAlive
    }
}

/// What is fixed about the process that made a connection (see ``CallerInspector``).
struct ConnectingProgram {
    /// The app identity of the connecting process: its executable, unit and content digest.
    var caller: CallerIdentity
    /// The program it ran when it connected.
    var image: ProgramImage
    /// True when a manifest pins the executable and its digest is not known yet.
    var needsHashing: Bool
    /// Why a pinned executable's digest will not be computed, for the log.
    var digestUnavailable: String?
}
