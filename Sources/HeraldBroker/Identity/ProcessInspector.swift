import HeraldFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads what the kernel says about a process from a `/proc`-shaped tree: its executable (`PID/exe`), its
/// groups (`PID/status`) and its systemd unit (`PID/cgroup`). The root is a parameter so that tests can use a
/// fake tree; the daemon uses `/proc` and re-validates the process (pidfd) after reading.
package struct ProcessInspector: Sendable {
    /// The real tree.
    package static let system = ProcessInspector(procRoot: "/proc")

    /// The directory holding one directory per process id.
    package let procRoot: String

    package init(procRoot: String) {
        self.procRoot = procRoot
    }

    /// The executable of `pid`: the target of `PID/exe`, with the kernel's ` (deleted)` marker split off, and
    /// marked `namesAnotherFile` when that path, as the host sees it, is not the file the process runs.
    package func executable(of pid: Int32) throws(ProcessInspectionError) -> ExecutableLink {
        let link = path(pid, "exe")
        var executable: ExecutableLink
        do {
            executable = ExecutableLink(linkTarget: try SymbolicLink.target(of: link))
        } catch {
            throw .unreadable(link, error.description)
        }
        if !executable.isDeleted && !runs(fileAt: executable.path, pid: pid) { executable.namesAnotherFile = true }
        return executable
    }

    /// True when `path`, as the host sees it, is the very file `pid` runs. `PID/exe` gives the path as the process
    /// sees it; a process in a mount namespace of its own (an unprivileged user namespace suffices) may have mounted
    /// any program at a registered app's path. The host's view is PID 1's root, which also looks past the daemon's
    /// own sandbox (ProtectHome=, PrivateTmp=); where that cannot be read, this process's own view is used.
    private func runs(fileAt path: String, pid: Int32) -> Bool {
        var running = stat()
        guard stat(self.path(pid, "exe"), &running) == 0 else { return false }
        var named = stat()
        for candidate in [procRoot + "/1/root" + path, path] where stat(candidate, &named) == 0 {
            return named.st_dev == running.st_dev && named.st_ino == running.st_ino
        }
        return false
    }

    /// The SHA-256 of the executable's content, read through `PID/exe` (the file that runs, even if the path
    /// now names another file).
    package func executableSHA256(of pid: Int32) throws(ProcessInspectionError) -> SHA256Digest {
        let link = path(pid, "exe")
        let fd = open(link, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(link, "cannot open the executable") }
        defer { close(fd) }
        var hasher = SHA256()
        let failure = FileContents.forEachChunk(of: fd, size: 1 << 20) { chunk in
            hasher.update(Array(chunk))
            return true
        }
        if let failure { throw .unreadable(link, failure.description) }
        return hasher.finalize()
    }

    /// The program `pid` runs now: the executable file behind `PID/exe`, the start time and the layout from
    /// `PID/stat` (see ``ProgramImage``).
    package func programImage(of pid: Int32) throws(ProcessInspectionError) -> ProgramImage {
        var running = stat()
        guard stat(path(pid, "exe"), &running) == 0 else {
            throw .unreadable(path(pid, "exe"), String(cString: strerror(errno)))
        }
        let file = path(pid, "stat")
        guard let fields = ProgramImage.parseStat(try text(pid, "stat")) else {
            throw .malformed(file, "unexpected layout")
        }
        return ProgramImage(
            device: UInt64(running.st_dev), inode: UInt64(running.st_ino), startTime: fields.startTime,
            codeStart: fields.codeStart, stackStart: fields.stackStart)
    }

    /// When `pid` started, in clock ticks after boot (`PID/stat` field 22, which every user may read).
    package func startTime(of pid: Int32) throws(ProcessInspectionError) -> UInt64 {
        guard let fields = ProgramImage.parseStat(try text(pid, "stat")) else {
            throw .malformed(path(pid, "stat"), "unexpected layout")
        }
        return fields.startTime
    }

    /// What the start environment of `pid` (`PID/environ`) asks of the dynamic loader; nil when it cannot be read.
    /// `readMemory` reads the environment from the process's memory where the file may not be opened: it is
    /// readable by the process's own user only, while the memory is readable with the right to trace the process.
    package func loaderSettings(of pid: Int32, readMemory: (Int32, Range<UInt64>) -> [UInt8]? = { _, _ in nil })
        -> (injecting: String?, libraryPath: Bool)?
    {
        // `/proc` files report a size of zero: read until the end.
        let fd = open(path(pid, "environ"), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            guard errno == EACCES, let stat = try? text(pid, "stat"),
                let range = ProgramImage.parseEnvironmentRange(stat),
                let environment = readMemory(
                    pid,
                    range
                        .lowerBound..<min(
                            range.upperBound,
                            range.lowerBound + UInt64(Self.environmentLimit)))
            else { return nil }
            return LoaderOverride.found(inEnvironment: environment)
        }
        defer { close(fd) }
        var environment: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while environment.count < Self.environmentLimit {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 { return nil }
            if count == 0 { break }
            environment += chunk[0..<count]
        }
        return LoaderOverride.found(inEnvironment: environment)
    }

    /// The most of a start environment read (the kernel allows a quarter of the stack limit, usually 2 MiB).
    static let environmentLimit = 4 << 20

    /// The pid of the process tracing `pid` (`TracerPid:` of `PID/status`): 0 when none is.
    package func tracer(of pid: Int32) throws(ProcessInspectionError) -> Int32 {
        for line in try text(pid, "status").split(whereSeparator: \.isNewline) where line.hasPrefix("TracerPid:") {
            return line.dropFirst("TracerPid:".count).split(whereSeparator: \.isWhitespace).first.flatMap { Int32($0) }
                ?? 0
        }
        return 0
    }

    /// The systemd unit of `pid`, from `PID/cgroup`; nil when the process is in no unit.
    package func systemdUnit(of pid: Int32) throws(ProcessInspectionError) -> SystemdUnit? {
        SystemdUnit.parse(procCgroup: try text(pid, "cgroup"))
    }

    /// The process's effective uid and its groups (primary first), from the `Uid:`, `Gid:` and `Groups:` lines
    /// of `PID/status`.
    package func credentials(of pid: Int32) throws(ProcessInspectionError) -> (uid: UInt32, groups: [UInt32]) {
        let file = path(pid, "status")
        guard let credentials = Self.parseStatus(try text(pid, "status")) else {
            throw .malformed(file, "no Uid:/Gid: lines")
        }
        return credentials
    }

    /// Everything the permission policy needs about `pid`, whose peer credentials say `uid`. The executable's
    /// SHA-256 is computed only when `needsDigest` says a manifest pins its path.
    package func identity(of pid: Int32, uid: UInt32, needsDigest: (String) -> Bool = { _ in false })
        throws(ProcessInspectionError) -> CallerIdentity
    {
        let executable = try? executable(of: pid)
        var digest: SHA256Digest?
        if let executable, executable.namesRunningFile, needsDigest(executable.path) {
            digest = try executableSHA256(of: pid)
        }
        let groups = try credentials(of: pid).groups
        return CallerIdentity(
            pid: pid, uid: uid, groups: groups, executable: executable, executableSHA256: digest,
            systemdUnit: try systemdUnit(of: pid))
    }

    /// The effective uid and the groups from the text of `/proc/PID/status`.
    package static func parseStatus(_ text: String) -> (uid: UInt32, groups: [UInt32])? {
        var uid: UInt32?
        var gid: UInt32?
        var groups: [UInt32] = []
        // Lines as bytes, and only the three wanted split into fields: the file has some sixty lines, read for
        // every request a client sends.
        for bytes in text.utf8.split(separator: UInt8(ascii: "\n")) {
            guard let first = bytes.first, first == UInt8(ascii: "U") || first == UInt8(ascii: "G") else { continue }
            let fields = Substring(bytes).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let key = fields.first else { continue }
            // Uid: real, effective, saved, filesystem.
            switch key {
            case "Uid:" where fields.count >= 3: uid = UInt32(fields[2])
            case "Gid:" where fields.count >= 3: gid = UInt32(fields[2])
            case "Groups:": groups = fields.dropFirst().compactMap { UInt32($0) }
            default: break
            }
        }
        guard let uid, let gid else { return nil }
        return (uid, [gid] + groups.filter { $0 != gid })
    }

    private func path(_ pid: Int32, _ file: String) -> String {
        procRoot + "/" + String(pid) + "/" + file
    }

    private func text(_ pid: Int32, _ file: String) throws(ProcessInspectionError) -> String {
        let path = path(pid, file)
        switch FileContents.read(path) {
        case .success(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .failure(let failure): throw .unreadable(path, failure.description)
        }
    }
}

/// Why a process could not be inspected (it exited, or `/proc` is not readable).
package enum ProcessInspectionError: Error, Hashable, Sendable, CustomStringConvertible {
    case unreadable(String, String)
    case malformed(String, String)

    package var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .malformed(let path, let reason): return "cannot understand \(path): \(reason)"
        }
    }
}
