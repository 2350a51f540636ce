import CHeraldSystem
import HeraldBroker
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The moved-socket programs of kernel enforcement (docs/enforcement.md, "Sockets made before a process moved"):
/// attached at the root of the cgroup hierarchy, they remember which cgroup made each socket, and refuse
/// connect() and sendmsg() on a socket whose caller's cgroup stands stricter than that (a process moved into a
/// held-back app's cgroup, using a socket it made before). heraldd keeps their standing map in step with the
/// rules; like the ingress program's, their links go with heraldd's process.
final class MovedSockets {
    /// Why moved sockets are not judged: the kernel cannot load or attach the programs. Nil while they work.
    private(set) var unavailable: String?
    private let mountPoint: String
    private let netnsCookie: UInt64
    private let fallback: SocketStanding
    private let logger: Logger
    private var standingMap: Int32 = -1
    private var originMap: Int32 = -1
    private var programs: [Int32] = []
    private var links: [Int32] = []
    private var programUIDs: [UInt32]?
    /// The standing map's contents, by cgroup id.
    private var entries: [UInt64: SocketStanding] = [:]

    /// Creates the maps and attaches the programs for `operatorUIDs`; a kernel that cannot leaves
    /// ``unavailable`` set (heraldd still enforces with the rules and the ingress program).
    init(mountPoint: String, mode: EnforcementMode, operatorUIDs: [UInt32], logger: Logger) {
        self.mountPoint = mountPoint
        self.logger = logger
        fallback = SocketStanding.fallback(for: mode)
        netnsCookie = UInt64(herald_netns_cookie())
        var standing: Int32 = -1
        var origin: Int32 = -1
        guard herald_moved_maps_create(&standing, &origin) == 0 else {
            report("the kernel cannot create the programs' maps: \(String(cString: strerror(errno)))")
            return
        }
        (standingMap, originMap) = (standing, origin)
        load(operatorUIDs: operatorUIDs)
    }

    deinit {
        for descriptor in links + programs + [standingMap, originMap] where descriptor >= 0 { close(descriptor) }
    }

    /// How many sockets the programs follow now (made since heraldd attached them), or nil when unavailable.
    var socketsFollowed: Int? {
        guard unavailable == nil, originMap >= 0 else { return nil }
        let count = herald_moved_origin_count(originMap)
        return count >= 0 ? count : nil
    }

    /// The standing of the cgroup with id `id` in the map (the mode's fallback when it has none).
    func standing(ofCgroupID id: UInt64) -> SocketStanding { entries[id] ?? fallback }

    /// Puts `standings` (by cgroup path below the hierarchy's root, the root as the empty path; only the cgroups
    /// whose standing differs from the mode's fallback) in the standing map; a new set of operators loads the
    /// programs again.
    func update(standings: [String: SocketStanding], operatorUIDs: [UInt32]) {
        guard standingMap >= 0 else { return }
        if programUIDs != operatorUIDs.sorted() { load(operatorUIDs: operatorUIDs) }
        var wanted: [UInt64: SocketStanding] = [:]
        for (path, standing) in standings {
            var status = stat()
            // A cgroup removed since the tree was read has no id any more; the next reading drops it.
            guard stat(path.isEmpty ? mountPoint : mountPoint + "/" + path, &status) == 0 else { continue }
            wanted[UInt64(status.st_ino)] = standing
        }
        for (id, standing) in wanted where entries[id] != standing {
            if herald_moved_standing_set(standingMap, id, UInt32(standing.rawValue)) == 0 {
                entries[id] = standing
            } else {
                report("cannot set a cgroup's standing: \(String(cString: strerror(errno)))")
            }
        }
        for id in entries.keys where wanted[id] == nil {
            if herald_moved_standing_remove(standingMap, id) == 0 { entries[id] = nil }
        }
    }

    /// Detaches the programs.
    func detach() {
        for link in links { close(link) }
        links = []
    }

    private func load(operatorUIDs: [UInt32]) {
        programUIDs = operatorUIDs.sorted()
        let uids = Array(operatorUIDs.sorted().prefix(64))
        if operatorUIDs.count > uids.count {
            logger.warning(
                "enforcement: the moved-socket programs name \(uids.count) of \(operatorUIDs.count) operators; the others' moved sockets are judged like anyone's"
            )
        }
        var log = [CChar](repeating: 0, count: 8192)
        var loaded = [Int32](repeating: -1, count: Int(HERALD_MOVED_PROGRAMS))
        let status = uids.withUnsafeBufferPointer { buffer in
            herald_moved_programs_load(
                standingMap, originMap, buffer.baseAddress, buffer.count, netnsCookie, UInt32(fallback.rawValue),
                &loaded, &log, log.count)
        }
        let code = errno
        guard status == 0 else {
            report(
                "the kernel cannot load the moved-socket programs (BPF_PROG_TYPE_CGROUP_SOCK_ADDR): "
                    + BPFLoadFailure.describe(code: code, log: log))
            return
        }
        var linked = [Int32](repeating: -1, count: Int(HERALD_MOVED_PROGRAMS))
        guard herald_moved_programs_link(loaded, mountPoint, &linked) == 0 else {
            let reason = String(cString: strerror(errno))
            for program in loaded { close(program) }
            report("cannot attach the moved-socket programs to \(mountPoint): \(reason)")
            return
        }
        // The new programs are in place before the old ones go, so no call slips between them.
        detach()
        for program in programs { close(program) }
        (programs, links) = (loaded, linked)
        if unavailable != nil { logger.notice("enforcement: sockets made before a move are judged by their caller") }
        unavailable = nil
    }

    /// Records why moved sockets are not judged, logged once per reason.
    private func report(_ reason: String) {
        if unavailable != reason {
            logger.error("enforcement: sockets made before a process moved keep their first standing: \(reason)")
        }
        unavailable = reason
    }
}
