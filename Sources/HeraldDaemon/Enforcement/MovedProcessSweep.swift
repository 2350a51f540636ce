import CHeraldSystem
import HeraldBroker
import HeraldWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Ends the connections a process made before it moved into a held-back cgroup (docs/enforcement.md, "Sockets
/// made before a process moved"). The moved-socket programs refuse new calls on such sockets; a connection already
/// made needs none, so at each reading of the tree heraldd looks at the processes that came into a held-back
/// cgroup since the last one (all of them when the cgroup's standing changed), finds their sockets through
/// sock_diag, and ends (SOCK_DESTROY) those that were made in a cgroup standing lower and reach what the process's
/// standing holds back.
final class MovedProcessSweep {
    /// Why such connections are not ended (the kernel cannot find or end sockets). Nil while it works.
    private(set) var unavailable: String?
    /// Connections ended since heraldd started.
    private(set) var ended = 0
    private let mountPoint: String
    private let logger: Logger
    /// The most processes new to held-back cgroups whose open files one sweep looks at (the others wait for the
    /// next sweep), so that a user starting processes by the thousand cannot make a sweep long.
    static let processesPerSweep = 1_024
    /// The processes of each held-back cgroup at the last reading, and the cgroup's standing then.
    private var seen: [String: (standing: SocketStanding, pids: Set<Int32>)] = [:]

    init(mountPoint: String, logger: Logger) {
        self.mountPoint = mountPoint
        self.logger = logger
    }

    /// Looks at the processes new to each held-back cgroup of `cgroups` (paths below the hierarchy's root; the
    /// root itself is the empty path). `standing` gives a cgroup's standing by path, `origin` by cgroup id;
    /// sockets of `operatorUIDs` are never held back, so never ended.
    func sweep(
        cgroups: [String], standing: (String) -> SocketStanding, origin: (UInt64) -> SocketStanding,
        networks: LocalNetworks, operatorUIDs: [UInt32]
    ) {
        var candidates: [UInt64: (pid: Int32, cgroup: String, standing: SocketStanding)] = [:]
        var next: [String: (standing: SocketStanding, pids: Set<Int32>)] = [:]
        var budget = Self.processesPerSweep
        for path in [""] + cgroups {
            let held = standing(path)
            guard held > .open else { continue }
            var pids = Self.processes(of: path.isEmpty ? mountPoint : mountPoint + "/" + path)
            let before = seen[path].flatMap { $0.standing == held ? $0.pids : nil } ?? []
            for pid in pids where !before.contains(pid) {
                // Beyond the budget, a process stays unseen, to be looked at by a later sweep.
                guard budget > 0 else {
                    pids.remove(pid)
                    continue
                }
                budget -= 1
                for inode in Self.socketInodes(of: pid) { candidates[inode] = (pid, path, held) }
            }
            next[path] = (held, pids)
        }
        seen = next
        guard !candidates.isEmpty else { return }
        let inodes = Array(candidates.keys)
        var found = [herald_socket_entry](repeating: herald_socket_entry(), count: inodes.count)
        let count = inodes.withUnsafeBufferPointer { buffer in
            herald_sockets_find(buffer.baseAddress, buffer.count, &found, found.count)
        }
        guard count >= 0 else {
            report("cannot list sockets (sock_diag): \(String(cString: strerror(errno)))")
            return
        }
        for entry in found.prefix(min(count, found.count)) {
            guard entry.cgroup_id != 0, !operatorUIDs.contains(entry.uid), let caller = candidates[entry.inode]
            else { continue }
            let socket = Self.openSocket(entry)
            guard
                MovedSocketEnding.mustEnd(
                    socket, origin: origin(entry.cgroup_id), caller: caller.standing, networks: networks)
            else { continue }
            var target = entry
            if herald_socket_destroy(&target) == 0 {
                ended += 1
                let to = socket.peer.map { "to \($0)" } ?? "listening"
                logger.notice(
                    "enforcement: ended a socket (\(to)) that process \(caller.pid) made before it moved into \(caller.cgroup)"
                )
            } else if errno != ENOENT {
                report("cannot end a socket (SOCK_DESTROY): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The process ids in `cgroup.procs` of the cgroup directory `directory`.
    static func processes(of directory: String) -> Set<Int32> {
        let fd = open(directory + "/cgroup.procs", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk.prefix(count)
        }
        return Set(bytes.split(separator: UInt8(ascii: "\n")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) })
    }

    /// The inode numbers of the sockets among the open files of `pid` (`socket:[N]` in /proc/PID/fd).
    static func socketInodes(of pid: Int32) -> [UInt64] {
        let directory = "/proc/\(pid)/fd"
        guard let listing = opendir(directory) else { return [] }
        defer { closedir(listing) }
        var inodes: [UInt64] = []
        var target = [CChar](repeating: 0, count: 64)
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true else { continue }
            let length = readlink(directory + "/" + name, &target, target.count - 1)
            guard length > 9 else { continue }
            let text = String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("socket:["), text.hasSuffix("]") else { continue }
            if let inode = UInt64(text.dropFirst(8).dropLast()) { inodes.append(inode) }
        }
        return inodes
    }

    /// The socket's peer and listening state, an IPv4-mapped IPv6 address read as IPv4.
    static func openSocket(_ entry: herald_socket_entry) -> MovedSocketEnding.OpenSocket {
        let peer = address(entry.id.idiag_dst, family: entry.family)
        let local = address(entry.id.idiag_src, family: entry.family)
        let listener = entry.protocol == UInt8(IPPROTO_TCP) && entry.state == 10  // TCP_LISTEN
        return .init(peer: peer, peerPort: UInt16(bigEndian: entry.id.idiag_dport), local: local, isListener: listener)
    }

    /// The address in sock_diag's four words (network order), or nil when it is unspecified.
    static func address(_ words: (UInt32, UInt32, UInt32, UInt32), family: UInt8) -> IPPrefix.Address? {
        let (a, b, c, d) = (
            UInt32(bigEndian: words.0), UInt32(bigEndian: words.1), UInt32(bigEndian: words.2),
            UInt32(bigEndian: words.3)
        )
        if family == UInt8(AF_INET) || (a == 0 && b == 0 && c == 0xffff) {
            let v4 = family == UInt8(AF_INET) ? a : d
            return v4 == 0 ? nil : .v4(IPv4Address(v4))
        }
        if a == 0 && b == 0 && c == 0 && d == 0 { return nil }
        return .v6(IPv6Address(high: UInt64(a) << 32 | UInt64(b), low: UInt64(c) << 32 | UInt64(d)))
    }

    /// Records why connections are not ended, logged once per reason.
    private func report(_ reason: String) {
        if unavailable != reason {
            logger.error("enforcement: connections made before a process moved are not ended: \(reason)")
        }
        unavailable = reason
    }
}
