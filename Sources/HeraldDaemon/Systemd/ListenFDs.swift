import CHeraldSystem
import Glibc

/// Socket activation, written by hand after `sd_listen_fds_with_names`: the descriptors systemd passes
/// start at 3 (`SD_LISTEN_FDS_START`), `LISTEN_FDS` says how many, `LISTEN_FDNAMES` names them
/// (colon-separated, from each socket unit's `FileDescriptorName=`), and `LISTEN_PID` must be this process,
/// otherwise the variables were inherited from a parent and the descriptors are not ours.
package struct ListenFDs: Sendable, Equatable {
    /// `SD_LISTEN_FDS_START`.
    package static let firstDescriptor: Int32 = 3

    /// One passed descriptor and its name (`unknown` when systemd gave none, as libsystemd reports).
    package struct Entry: Sendable, Equatable {
        package var name: String
        package var fd: Int32
        package init(name: String, fd: Int32) {
            self.name = name
            self.fd = fd
        }
    }

    /// The descriptors in the order systemd passed them.
    package var entries: [Entry]

    package init(entries: [Entry] = []) { self.entries = entries }

    /// Name to descriptor (for the daemon: `dnssd` and `control`). When several descriptors share a name
    /// (a socket unit with several `ListenStream=` lines) the first is kept; `descriptors(named:)` has all.
    package var byName: [String: Int32] {
        var result: [String: Int32] = [:]
        for entry in entries where result[entry.name] == nil { result[entry.name] = entry.fd }
        return result
    }

    package func descriptors(named name: String) -> [Int32] {
        entries.filter { $0.name == name }.map(\.fd)
    }

    package var isEmpty: Bool { entries.isEmpty }

    /// Parses the activation variables as seen by process `pid` and marks every passed descriptor
    /// close-on-exec. Returns no descriptors when `LISTEN_PID` or `LISTEN_FDS` is absent or `LISTEN_PID`
    /// is another process (as `sd_listen_fds` returns 0). Throws on malformed values, on a name count
    /// that differs from `LISTEN_FDS`, and on a descriptor that is not open. `firstDescriptor` is 3 except
    /// in tests, which cannot own fds 3, 4, … in a shared test process.
    package static func parse(
        environment: [String: String], pid: pid_t = getpid(), firstDescriptor: Int32 = ListenFDs.firstDescriptor
    ) throws -> ListenFDs {
        guard let pidText = environment["LISTEN_PID"], let countText = environment["LISTEN_FDS"] else {
            return ListenFDs()
        }
        guard let listenPID = pid_t(pidText), listenPID > 0 else {
            throw SystemdError.invalidEnvironment("LISTEN_PID '\(pidText)' is not a process ID")
        }
        guard listenPID == pid else { return ListenFDs() }
        guard let count = Int32(countText), count >= 0, count <= Int32.max - firstDescriptor else {
            throw SystemdError.invalidEnvironment("LISTEN_FDS '\(countText)' is not a descriptor count")
        }
        var names: [String]
        if let namesText = environment["LISTEN_FDNAMES"] {
            names = namesText.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if count == 0 && namesText.isEmpty { names = [] }
            guard names.count == Int(count) else {
                throw SystemdError.invalidEnvironment(
                    "LISTEN_FDNAMES has \(names.count) names for LISTEN_FDS=\(count)")
            }
        } else {
            names = Array(repeating: "unknown", count: Int(count))
        }
        var entries: [Entry] = []
        for index in 0..<count {
            let fd = firstDescriptor + index
            let flags = fcntl(fd, F_GETFD)
            guard flags >= 0 else { throw SystemdError.system("fcntl F_GETFD on passed fd \(fd)", errno) }
            if flags & FD_CLOEXEC == 0 {
                guard fcntl(fd, F_SETFD, flags | FD_CLOEXEC) >= 0 else {
                    throw SystemdError.system("fcntl F_SETFD on passed fd \(fd)", errno)
                }
            }
            entries.append(Entry(name: names[Int(index)], fd: fd))
        }
        return ListenFDs(entries: entries)
    }

    /// The descriptors systemd passed to this process. With `unsetEnvironment`, removes `LISTEN_PID`,
    /// `LISTEN_FDS` and `LISTEN_FDNAMES` (whatever the outcome) so children do not see them.
    package static func fromProcessEnvironment(unsetEnvironment: Bool = true) throws -> ListenFDs {
        let keys = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]
        defer { if unsetEnvironment { for key in keys { unsetenv(key) } } }
        return try parse(environment: SystemdNotifier.processEnvironment(keys))
    }

    /// Whether `fd` is a socket of the given type listening (for stream sockets) on a Unix path, e.g. to
    /// check that the `dnssd` descriptor really is `/run/herald/dnssd.sock` (as `sd_is_socket_unix`).
    package static func isUnixSocket(_ fd: Int32, path: String? = nil) -> Bool {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0, address.sun_family == sa_family_t(AF_UNIX) else { return false }
        guard let path else { return true }
        let bound = withUnsafeBytes(of: &address.sun_path) { raw -> String in
            let count = min(Int(length) - MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!, raw.count)
            let bytes = raw.prefix(max(0, count)).prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        return bound == path
    }
}
