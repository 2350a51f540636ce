/// Who is asking, as the kernel reports it (docs/permissions.md, "Who is asking"): never anything the client says.
///
/// The daemon fills it from `SO_PEERCRED` and `/proc` (see ``ProcessInspector``); tests build it directly.
package struct CallerIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The process id, for logs; nil when unknown.
    package var pid: Int32?
    /// The effective user id.
    package var uid: UInt32
    /// The primary and supplementary group ids of the process.
    package var groups: [UInt32]
    /// The process's executable, from `/proc/PID/exe`; nil when it could not be read.
    package var executable: ExecutableLink?
    /// The SHA-256 of the executable's content, when computed (only needed when a manifest pins the path).
    package var executableSHA256: SHA256Digest?
    /// The systemd unit from `/proc/PID/cgroup`; nil when the process is in none.
    package var systemdUnit: SystemdUnit?

    package init(
        pid: Int32? = nil, uid: UInt32, groups: [UInt32] = [], executable: ExecutableLink? = nil,
        executableSHA256: SHA256Digest? = nil, systemdUnit: SystemdUnit? = nil
    ) {
        self.pid = pid
        self.uid = uid
        self.groups = groups
        self.executable = executable
        self.executableSHA256 = executableSHA256
        self.systemdUnit = systemdUnit
    }

    /// A convenience for an executable that still exists at `path`.
    package init(
        pid: Int32? = nil, uid: UInt32, groups: [UInt32] = [], executablePath: String?,
        executableSHA256: SHA256Digest? = nil, systemdUnit: SystemdUnit? = nil
    ) {
        self.init(
            pid: pid, uid: uid, groups: groups, executable: executablePath.map { ExecutableLink(path: $0) },
            executableSHA256: executableSHA256, systemdUnit: systemdUnit)
    }

    /// `pid 1234 uid 1000 /usr/bin/tictactoe in tictactoe.service`, for logs and the audit trail.
    package var description: String {
        var parts: [String] = []
        if let pid { parts.append("pid \(pid)") }
        parts.append("uid \(uid)")
        if let executable { parts.append(executable.description) }
        if let systemdUnit { parts.append("in " + systemdUnit.description) }
        return parts.joined(separator: " ")
    }
}

/// The target of `/proc/PID/exe`: the executable's path, and whether the kernel marks it ` (deleted)` (the
/// file was removed or replaced after the process started, so the path no longer names what runs).
package struct ExecutableLink: Hashable, Sendable, CustomStringConvertible {
    /// The kernel's marker after the path of an executable that no longer exists.
    package static let deletedMarker = " (deleted)"

    /// The marker shown after a path that names another file than the one that runs.
    package static let elsewhereMarker = " (another file at this path)"

    package var path: String
    package var isDeleted: Bool
    /// True when the path, seen from the host, names another file than the one that runs: the process sees the
    /// file system through a mount namespace of its own, where anything may be mounted at any path.
    package var namesAnotherFile: Bool
    /// Why the process may run other code than the file's (`LD_PRELOAD` in its start environment, a tracer
    /// attached); nil when nothing says so. Such a process does not pass as the program (see ``LoaderOverride``).
    package var foreignCode: String?
    /// True when the process's start environment sets `LD_LIBRARY_PATH`: it may have loaded its libraries from
    /// anywhere, which a program whose content is pinned must not.
    package var librariesFromElsewhere: Bool

    package init(
        path: String, isDeleted: Bool = false, namesAnotherFile: Bool = false, foreignCode: String? = nil,
        librariesFromElsewhere: Bool = false
    ) {
        self.path = path
        self.isDeleted = isDeleted
        self.namesAnotherFile = namesAnotherFile
        self.foreignCode = foreignCode
        self.librariesFromElsewhere = librariesFromElsewhere
    }

    /// True when the path names the file that runs, and nothing says the process runs other code than that
    /// file's, so that it may be matched against a manifest.
    package var namesRunningFile: Bool { !isDeleted && !namesAnotherFile && foreignCode == nil }

    /// Splits the text `readlink` gives for `/proc/PID/exe`.
    package init(linkTarget: String) {
        if linkTarget.hasSuffix(Self.deletedMarker) {
            self.init(path: String(linkTarget.dropLast(Self.deletedMarker.count)), isDeleted: true)
        } else {
            self.init(path: linkTarget)
        }
    }

    package var description: String {
        path + (isDeleted ? Self.deletedMarker : "") + (namesAnotherFile ? Self.elsewhereMarker : "")
            + (foreignCode.map { " (\($0))" } ?? "")
    }
}
