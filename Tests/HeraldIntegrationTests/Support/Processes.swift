import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The outcome of a command that ran to completion (or was killed at its timeout).
struct CommandResult: Sendable, CustomStringConvertible {
    /// The exit status; for a process killed by a signal, 128 + the signal number.
    var status: Int32
    var stdout: String
    var stderr: String
    /// The command did not finish within its timeout and was killed.
    var timedOut: Bool

    var succeeded: Bool { status == 0 && !timedOut }

    var description: String {
        var text = timedOut ? "timed out (killed)" : "exit status \(status)"
        if !stdout.isEmpty { text += "\n--- stdout ---\n" + stdout }
        if !stderr.isEmpty { text += "\n--- stderr ---\n" + stderr }
        return text
    }
}

/// Errors of the harness itself, with enough context to diagnose a failed run.
enum HarnessError: Error, CustomStringConvertible {
    case commandFailed(command: [String], result: CommandResult)
    case outputNotSeen(command: [String], expected: String, reason: String, stdout: String, stderr: String)
    case setup(String)

    var description: String {
        switch self {
        case .commandFailed(let command, let result):
            return "command failed: \(command.joined(separator: " "))\n\(result)"
        case .outputNotSeen(let command, let expected, let reason, let stdout, let stderr):
            var text = "\(command.joined(separator: " ")): \(reason) before printing \"\(expected)\""
            if !stdout.isEmpty { text += "\n--- stdout ---\n" + stdout }
            if !stderr.isEmpty { text += "\n--- stderr ---\n" + stderr }
            return text
        case .setup(let message):
            return message
        }
    }
}

/// A process started by the harness, with its stdout and stderr captured.
///
/// Started with `posix_spawn` rather than Foundation's `Process`: on Linux,
/// `Process` notices a child's exit through a socket it leaves open in the
/// child, and daemons that close all their descriptors at startup (avahi-daemon
/// does) make it call a blocking `waitpid` early, which stalls the exit
/// detection of every later process. Here a dedicated thread waits for each
/// child instead.
///
/// The child gets /dev/null as stdin, pipes as stdout and stderr (read into
/// memory by two threads until end of file, so a chatty process never blocks),
/// no other descriptor of the test process, default signal dispositions and
/// mask, and its own process group (so a terminal's Ctrl-C does not reach it;
/// the harness kills it at shutdown, and signals go to the whole group).
final class RunningProcess: @unchecked Sendable {
    enum Stream: Sendable { case stdout, stderr, either }

    /// The command as the caller asked for it (without any `nsenter` prefix).
    let command: [String]
    let pid: pid_t

    private let condition = NSCondition()
    private var outData = Data()
    private var errData = Data()
    private var openStreams = 2
    private var exited = false
    private var rawStatus: Int32 = 0

    /// Starts `executable` with `arguments`; `command` is what error messages show.
    /// `environment` defaults to the test process's.
    init(executable: String, arguments: [String], command: [String], environment: [String: String]? = nil) throws {
        self.command = command
        let environment = environment ?? ProcessInfo.processInfo.environment
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else { throw HarnessError.setup("pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&errPipe) == 0 else {
            close(outPipe[0])
            close(outPipe[1])
            throw HarnessError.setup("pipe: \(String(cString: strerror(errno)))")
        }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        SpawnSupport.closeOtherDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let argv = ([executable.split(separator: "/").last.map(String.init) ?? executable] + arguments).map {
            strdup($0)
        }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv + [nil], envp + [nil])
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw HarnessError.setup(
                "cannot start \(command.joined(separator: " ")) (\(executable)): \(String(cString: strerror(rc)))")
        }
        pid = child
        startReader(outPipe[0], isStdout: true)
        startReader(errPipe[0], isStdout: false)
        startReaper()
    }

    private func startReaper() {
        let thread = Thread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            condition.lock()
            rawStatus = status
            exited = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "wait for \(command.first ?? "?")"
        thread.start()
    }

    private func startReader(_ fd: Int32, isStdout: Bool) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                condition.lock()
                if count > 0 {
                    if isStdout {
                        outData.append(contentsOf: buffer[0..<count])
                    } else {
                        errData.append(contentsOf: buffer[0..<count])
                    }
                } else {
                    openStreams -= 1
                }
                condition.broadcast()
                condition.unlock()
                if count <= 0 { break }
            }
            close(fd)
        }
        thread.name = "output of \(command.first ?? "?")"
        thread.start()
    }

    // MARK: State

    /// A memory figure of the running process from `/proc/PID/status` (VmRSS, VmHWM, ...), in KiB.
    func statusKiB(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        // Lines like "VmHWM:\t   13984 kB".
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        guard let value = line?.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) }) else {
            throw HarnessError.setup("/proc/\(pid)/status has no \(field) in KiB:\n\(status)")
        }
        return value
    }

    /// The process's mapping of `file` with these permissions ("r-xp": its code), from `/proc/PID/smaps`: where it
    /// lies and the flags the kernel keeps for it ("uw": registered for write-protect faults with a userfaultfd).
    func mapping(of path: String, permissions: String) throws -> (range: Range<UInt64>, flags: [String]) {
        // The kernel names the file by its path with the links resolved (.build/release is one).
        let file = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let smaps = try String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8)
        var found: Range<UInt64>?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let found, fields.first == "VmFlags:" { return (found, fields.dropFirst().map(String.init)) }
            guard found == nil, fields.count >= 6, fields[1] == permissions, fields[5] == file else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            if bounds.count == 2 { found = bounds[0]..<bounds[1] }
        }
        throw HarnessError.setup("no \(permissions) mapping of \(file) with its flags in /proc/\(pid)/smaps")
    }

    /// How the pages of `range` mapped in the process now (`/proc/PID/pagemap`'s "present" bit) fall into aligned
    /// blocks of `blockSize` bytes lying wholly inside it: how many blocks hold a mapped page, and how many are
    /// mapped whole.
    func mappedBlocks(in range: Range<UInt64>, blockSize: UInt64) throws -> (touched: Int, whole: Int) {
        let pageSize = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/pagemap"))
        defer { try? handle.close() }
        try handle.seek(toOffset: range.lowerBound / pageSize * 8)
        let pages = Int((range.upperBound - range.lowerBound) / pageSize)
        let data = try handle.read(upToCount: pages * 8) ?? Data()
        func present(_ page: Int) -> Bool { data[data.startIndex + page * 8 + 7] & 0x80 != 0 }
        let perBlock = Int(blockSize / pageSize)
        var counts: [UInt64: (pages: Int, present: Int)] = [:]
        for page in 0..<min(pages, data.count / 8) {
            let block = (range.lowerBound + UInt64(page) * pageSize) / blockSize
            counts[block, default: (0, 0)].pages += 1
            if present(page) { counts[block, default: (0, 0)].present += 1 }
        }
        let inside = counts.values.filter { $0.pages == perBlock }
        return (inside.filter { $0.present > 0 }.count, inside.filter { $0.present == perBlock }.count)
    }

    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !exited
    }

    /// The exit status once the process has exited (128 + signal when killed), else nil.
    var exitStatus: Int32? {
        condition.lock()
        defer { condition.unlock() }
        return exited ? exitStatusLocked() : nil
    }

    var stdout: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: outData, as: UTF8.self)
    }

    var stderr: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: errData, as: UTF8.self)
    }

    /// Both streams, stdout first.
    var output: String { stdout + stderr }

    private func text(of stream: Stream) -> String {
        switch stream {
        case .stdout: return String(decoding: outData, as: UTF8.self)
        case .stderr: return String(decoding: errData, as: UTF8.self)
        case .either:
            return String(decoding: outData, as: UTF8.self) + "\n" + String(decoding: errData, as: UTF8.self)
        }
    }

    // MARK: Waiting

    /// Waits until `needle` appears in the chosen stream and returns that
    /// stream's text so far. Throws when the process ends without printing it
    /// or the timeout passes; the error carries everything captured.
    @discardableResult
    func waitForOutput(containing needle: String, in stream: Stream = .either, timeout: TimeInterval = 10) throws
        -> String
    {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let captured = text(of: stream)
            if captured.contains(needle) { return captured }
            if exited && openStreams == 0 {
                let reason = "exited with status \(exitStatusLocked())"
                throw HarnessError.outputNotSeen(
                    command: command, expected: needle, reason: reason,
                    stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
            }
            if !condition.wait(until: deadline) {
                if text(of: stream).contains(needle) { return text(of: stream) }
                throw HarnessError.outputNotSeen(
                    command: command, expected: needle, reason: "timed out after \(timeout) s",
                    stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
            }
        }
    }

    private func exitStatusLocked() -> Int32 {
        let signal = rawStatus & 0x7f
        return signal == 0 ? (rawStatus >> 8) & 0xff : 128 + signal
    }

    /// Waits for the process to exit and its output to reach end of file.
    /// Returns the exit status, or nil if it is still running at the timeout.
    /// Output held open by a grandchild is waited for at most one more second.
    @discardableResult
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        while !exited {
            if !condition.wait(until: deadline) { break }
        }
        guard exited else {
            condition.unlock()
            return nil
        }
        let eofDeadline = Date(timeIntervalSinceNow: 1)
        while openStreams > 0 {
            if !condition.wait(until: eofDeadline) { break }
        }
        let status = exitStatusLocked()
        condition.unlock()
        return status
    }

    /// Sends `signal` to the process's group (the process and anything it
    /// started that stayed in its group) while the process has not been reaped.
    func send(_ signal: Int32) {
        condition.lock()
        defer { condition.unlock() }
        // Once the reaper has recorded the exit, the PID may already be someone else's.
        if !exited {
            if kill(-pid, signal) != 0 { kill(pid, signal) }
        }
    }

    /// SIGTERM, then SIGKILL after `grace` seconds. Returns the exit status.
    @discardableResult
    func terminate(grace: TimeInterval = 2) -> Int32? {
        send(SIGTERM)
        if let status = waitForExit(timeout: grace) { return status }
        send(SIGKILL)
        return waitForExit(timeout: 5)
    }

    /// Runs to completion (killing the process at `timeout`) and returns the result.
    func result(timeout: TimeInterval) -> CommandResult {
        var timedOut = false
        var status = waitForExit(timeout: timeout)
        if status == nil {
            timedOut = true
            send(SIGKILL)
            status = waitForExit(timeout: 5)
        }
        return CommandResult(status: status ?? -1, stdout: stdout, stderr: stderr, timedOut: timedOut)
    }
}

/// Commands run in the test process's own namespaces: only configuration
/// tools (`ip`, `nsenter` to set up namespaces), never anything that sends mDNS.
enum Command {
    /// Runs `argv` (the first element is looked up like a shell would, plus sbin)
    /// and returns its result; never throws for a non-zero status.
    static func run(_ argv: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        guard let name = argv.first else { throw HarnessError.setup("empty command") }
        let executable = try Requirements.requireExecutable(name)
        let process = try RunningProcess(executable: executable, arguments: Array(argv.dropFirst()), command: argv)
        return process.result(timeout: timeout)
    }

    /// Runs `argv` and throws with its output unless it exits 0.
    @discardableResult
    static func check(_ argv: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        let result = try run(argv, timeout: timeout)
        guard result.succeeded else { throw HarnessError.commandFailed(command: argv, result: result) }
        return result
    }
}

enum SpawnSupport {
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// glibc 2.34+ has `posix_spawn_file_actions_addclosefrom_np`, which Swift's
    /// Glibc module does not export (it needs _GNU_SOURCE); look it up at run time.
    private static let closeFrom: CloseFrom? = {
        guard let handle = dlopen(nil, RTLD_NOW),
            let symbol = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// Makes the child close every descriptor above 2.
    static func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let closeFrom, closeFrom(&actions, 3) == 0 { return }
        // Fallback: close what is open now (glibc ignores EBADF for close actions).
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}
