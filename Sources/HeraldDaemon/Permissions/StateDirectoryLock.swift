#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive lock on the state directory, held for as long as the daemon runs: two daemons sharing one
/// permission store would each keep in memory decisions that the other changes. The lock is `flock(2)` on
/// `heraldd.lock` in the directory, so the kernel releases it when the daemon exits however it exits; the file
/// holds the pid of the daemon that has it, for the message a second daemon gives.
package final class StateDirectoryLock {
    package static let fileName = "heraldd.lock"
    private let fd: Int32
    /// Why no lock could be taken on a directory that cannot be written (nil when it is held).
    package let unavailable: String?

    /// Takes the lock, creating the directory (mode 0700) when missing; throws when another process holds it. On a
    /// read-only directory without a lock file it holds nothing and says why in `unavailable`.
    package init(directory: String) throws(DaemonStartError) {
        if access(directory, F_OK) != 0 {
            // Missing parents are made as `mkdir -p` would (the umask decides); the directory itself is the daemon's
            // alone, made 0700 from the start.
            do {
                try Directories.make(directory, mode: 0o700, parentMode: 0o777)
            } catch {
                throw DaemonStartError(
                    "cannot create the state directory \(directory): \(String(cString: strerror(error.code))); "
                        + "create it (mode 0700), or give heraldd another one (--state-dir)")
            }
        }
        let path = directory + "/" + Self.fileName
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        let writable = fd >= 0
        if !writable {
            let failure = errno
            let reason = String(cString: strerror(failure))
            if failure == ENOTDIR { throw DaemonStartError("the state directory \(directory) is not a directory") }
            // Only a directory that cannot be written (read-only, or its permissions) is served without the lock.
            guard [EROFS, EACCES, EPERM].contains(failure) else {
                throw DaemonStartError("cannot open \(path): \(reason)")
            }
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                self.fd = -1
                self.unavailable =
                    "cannot create \(path) (\(reason)): nothing keeps a second heraldd off this state directory"
                return
            }
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.recordedPID(fd).map { " (pid \($0))" } ?? ""
            close(fd)
            throw DaemonStartError(
                "another heraldd\(holder) is using the state directory \(directory); stop it, or "
                    + "give this one a state directory of its own (--state-dir)")
        }
        if writable {
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(fd, 0)
            _ = pwrite(fd, pid, pid.count, 0)
        }
        self.fd = fd
        self.unavailable = nil
    }

    deinit { if fd >= 0 { close(fd) } }

    private static func recordedPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(
            String(
                decoding: buffer[..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") },
                as: UTF8.self))
    }
}
