#if canImport(Glibc)
import Glibc
#endif
import HeraldBroker

/// Establishes who an app-socket client is from the kernel's records only (BRIEF §1, "Who is asking"):
/// SO_PEERCRED and the connection's pidfd, then the process's executable, credentials and cgroup from `/proc`,
/// read again for every request (a process that exec'd another program is judged as that program) and
/// re-validated after reading: if the process exited meanwhile, its pid may name someone else, and the reading
/// is thrown away.
final class CallerInspector {
    private let processes: ProcessInspector
    /// SHA-256 digests of executables by file identity, so a pinned app is hashed once per binary, not per request.
    private var digests: [FileIdentity: SHA256Digest] = [:]
    private static let digestCacheLimit = 256

    init(processes: ProcessInspector = .system) {
        self.processes = processes
    }

    /// The caller as the permission policy sees it; nil when its identity cannot be established (then it is
    /// treated as unregistered, but an operator uid still counts as an operator).
    func identify(_ client: ClientIdentity, needsDigest: (String) -> Bool) -> CallerIdentity? {
        guard client.pid > 0, client.processIsAlive else { return nil }
        guard let credentials = try? processes.credentials(of: client.pid), credentials.uid == client.uid else {
            return nil
        }
        let executable = try? processes.executable(of: client.pid)
        var digest: SHA256Digest?
        if let executable, executable.namesRunningFile, needsDigest(executable.path) {
            digest = self.digest(of: client.pid)
            if digest == nil { return nil }
        }
        let unit: SystemdUnit?
        do {
            unit = try processes.systemdUnit(of: client.pid)
        } catch {
            return nil
        }
        // Everything read above belongs to the connecting process only if it is still running now.
        guard client.processIsAlive else { return nil }
        return CallerIdentity(pid: client.pid, uid: client.uid, groups: credentials.groups, executable: executable,
                              executableSHA256: digest, systemdUnit: unit)
    }

    /// What is known for certain about a caller whose process cannot be inspected: its uid and primary group.
    static func minimal(_ client: ClientIdentity) -> CallerIdentity {
        CallerIdentity(pid: client.pid > 0 ? client.pid : nil, uid: client.uid, groups: [client.gid])
    }

    private func digest(of pid: Int32) -> SHA256Digest? {
        var info = stat()
        guard stat(processes.procRoot + "/\(pid)/exe", &info) == 0 else { return nil }
        let key = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                               modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
        if let known = digests[key] { return known }
        guard let computed = try? processes.executableSHA256(of: pid) else { return nil }
        if digests.count >= Self.digestCacheLimit { digests.removeAll() }
        digests[key] = computed
        return computed
    }

    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
    }
}
