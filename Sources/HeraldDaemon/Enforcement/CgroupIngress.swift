import CHeraldSystem
import HeraldBroker
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The cgroup BPF ingress program of kernel enforcement (docs/enforcement.md, "Incoming multicast and broadcast"),
/// which drops the LAN's multicast and broadcast for the sockets of the cgroups it is attached to, and its
/// attachments: one BPF link per target cgroup, held open by heraldd and pinned in a BPF file system
/// (``pinDirectory``), so that the program stays attached after a crash or a fail-closed stop. The next start takes
/// the pinned links over and replaces them with its own; a fail-open stop removes them.
final class CgroupIngress {
    /// Where the links are pinned: a directory of the BPF file system, which heraldd creates when it can.
    static let pinDirectory = "/sys/fs/bpf/herald"

    /// Why receiving cannot be held back: the kernel cannot load or attach the program. Nil while it works.
    private(set) var unavailable: String?
    private let mountPoint: String
    private let netnsCookie: UInt64
    private let logger: Logger
    private var program: Int32 = -1
    /// The same program for the root cgroup's own sockets only, attached at the root (target "").
    private var rootProgram: Int32 = -1
    private var programUIDs: [UInt32]?
    /// The open link of each target cgroup, by its path below the hierarchy's root, and where it is pinned.
    private var links: [String: (fd: Int32, pin: String?)] = [:]
    /// Links an earlier heraldd left pinned, held until this one's own are attached.
    private var leftovers: [Int32] = []
    /// True once a failure to pin was logged.
    private var pinFailureLogged = false
    /// True when something failed in the current update.
    private var failedNow = false

    /// The cgroups the program is attached to now.
    var attachedCount: Int { links.count }

    /// Loads the program for `operatorUIDs`; throws, naming the drop-in, when heraldd lacks the capabilities (or
    /// the system-call filter refuses bpf(2)). A kernel without the program type leaves ``unavailable`` set.
    init(mountPoint: String, operatorUIDs: [UInt32], logger: Logger) throws(EnforcementError) {
        self.mountPoint = mountPoint
        self.logger = logger
        netnsCookie = UInt64(herald_netns_cookie())
        leftovers = Self.takePinned()
        try load(operatorUIDs: operatorUIDs)
    }

    deinit {
        detachAll()
        for link in leftovers { close(link) }
        for descriptor in [program, rootProgram] where descriptor >= 0 { close(descriptor) }
    }

    /// Attaches the program to exactly `targets` (paths below the hierarchy's root; "" for the root cgroup's own
    /// sockets): the new ones first, then the links of the others are closed, and so are those an earlier heraldd
    /// left. A new set of operators loads the program again and moves every link to it.
    func update(targets: [String], operatorUIDs: [UInt32]) {
        failedNow = false
        defer {
            if program >= 0 && !failedNow { unavailable = nil }
            releaseLeftovers()
        }
        if programUIDs != operatorUIDs.sorted() {
            let old = (program, links, rootProgram)
            (program, rootProgram) = (-1, -1)
            links = [:]
            do {
                try load(operatorUIDs: operatorUIDs)
            } catch {
                report("\(error)")
            }
            attach(targets)
            // A new link of the same cgroup took the old one's pin.
            for (path, link) in old.1 {
                if link.pin != nil && links[path]?.pin == link.pin { close(link.fd) } else { unpinAndClose(link) }
            }
            for descriptor in [old.0, old.2] where descriptor >= 0 { close(descriptor) }
            return
        }
        attach(targets)
        let wanted = Set(targets)
        for (path, link) in links where !wanted.contains(path) {
            unpinAndClose(link)
            links[path] = nil
        }
    }

    /// Detaches the program from every cgroup, pins included.
    func detachAll() {
        for link in links.values { unpinAndClose(link) }
        links = [:]
    }

    /// Closes heraldd's descriptors of the links but leaves their pins, so that the program stays attached after
    /// heraldd ends (a fail-closed stop). Returns how many stay.
    func keepPinned() -> Int {
        let kept = links.values.filter { $0.pin != nil }.count
        for link in links.values {
            if link.pin == nil { unpinAndClose(link) } else { close(link.fd) }
        }
        links = [:]
        return kept
    }

    /// Removes the links an earlier heraldd left pinned (with `enforcement = off`): unpinned, each is detached.
    /// Returns how many there were.
    static func removePinned() -> Int {
        let names = pinNames()
        for name in names { unlink(pinDirectory + "/" + name) }
        return names.count
    }

    /// Opens the links an earlier heraldd left pinned and removes their pins: they stay attached while the
    /// descriptors are open.
    private static func takePinned() -> [Int32] {
        pinNames().compactMap { name in
            let path = pinDirectory + "/" + name
            let fd = herald_bpf_pinned(path)
            unlink(path)
            return fd >= 0 ? fd : nil
        }
    }

    /// The names of the pinned ingress links in ``pinDirectory``.
    private static func pinNames() -> [String] {
        guard let directory = opendir(pinDirectory) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("ingress-") { names.append(name) }
        }
        return names
    }

    private func releaseLeftovers() {
        guard !leftovers.isEmpty else { return }
        for link in leftovers { close(link) }
        logger.notice("enforcement: replaced the \(leftovers.count) ingress links an earlier heraldd left pinned")
        leftovers = []
    }

    private func unpinAndClose(_ link: (fd: Int32, pin: String?)) {
        if let pin = link.pin { unlink(pin) }
        close(link.fd)
    }

    /// Pins `link`, the target `path`'s, as `ingress-ID` (the cgroup's id); nil when it cannot, logged once.
    private func pin(_ link: Int32, for path: String) -> String? {
        var target = stat()
        guard stat(path.isEmpty ? mountPoint : mountPoint + "/" + path, &target) == 0 else { return nil }
        let file = "\(Self.pinDirectory)/ingress-\(path.isEmpty ? "root-" : "")\(target.st_ino)"
        if mkdir(Self.pinDirectory, 0o700) != 0 && errno != EEXIST {
            logPinFailure(errno)
            return nil
        }
        unlink(file)
        guard herald_bpf_pin(link, file) == 0 else {
            logPinFailure(errno)
            return nil
        }
        return file
    }

    private func logPinFailure(_ code: Int32) {
        guard !pinFailureLogged else { return }
        pinFailureLogged = true
        logger.warning(
            "enforcement: the ingress program is attached only while heraldd runs: cannot pin its links in \(Self.pinDirectory): \(String(cString: strerror(code)))"
        )
    }

    private func attach(_ targets: [String]) {
        guard program >= 0 else { return }
        for path in targets where links[path] == nil {
            guard !path.isEmpty || rootProgram >= 0 else { continue }
            let link =
                path.isEmpty
                ? herald_bpf_cgroup_link(rootProgram, mountPoint)
                : herald_bpf_cgroup_link(program, mountPoint + "/" + path)
            if link >= 0 {
                links[path] = (link, pin(link, for: path))
                continue
            }
            let code = errno
            // A cgroup removed since the tree was read: the next reading drops it.
            if code == ENOENT { continue }
            report("cannot attach the ingress program to \(path): \(String(cString: strerror(code)))")
        }
    }

    private func load(operatorUIDs: [UInt32]) throws(EnforcementError) {
        let uids = Array(operatorUIDs.sorted().prefix(64))
        if operatorUIDs.count > uids.count {
            logger.warning(
                "enforcement: the ingress program names \(uids.count) of \(operatorUIDs.count) operators; the others' sockets no longer hear the LAN's multicast and broadcast"
            )
        }
        var log = [CChar](repeating: 0, count: 8192)
        let fd = uids.withUnsafeBufferPointer { buffer in
            herald_bpf_ingress_load(buffer.baseAddress, buffer.count, netnsCookie, 0, &log, log.count)
        }
        let code = errno
        programUIDs = operatorUIDs.sorted()
        guard fd < 0 else {
            program = fd
            unavailable = nil
            var root = stat()
            if stat(mountPoint, &root) == 0 {
                rootProgram = uids.withUnsafeBufferPointer { buffer in
                    herald_bpf_ingress_load(
                        buffer.baseAddress, buffer.count, netnsCookie, UInt64(root.st_ino), nil, 0)
                }
            }
            if rootProgram < 0 {
                report(
                    "the kernel cannot load the ingress program for the root cgroup: \(String(cString: strerror(errno)))"
                )
            }
            return
        }
        if code == EPERM || code == EACCES {
            throw .unavailable(
                "holding back incoming multicast and broadcast needs CAP_BPF and the bpf(2) system call: install "
                    + "systemd/heraldd-enforcement.conf as a drop-in of heraldd.service (docs/enforcement.md)")
        }
        report(
            "the kernel cannot load the cgroup ingress program (BPF_PROG_TYPE_CGROUP_SKB): "
                + BPFLoadFailure.describe(code: code, log: log))
    }

    /// Records why receiving is not held back, logged once per reason.
    private func report(_ reason: String) {
        failedNow = true
        if unavailable != reason {
            logger.error("enforcement: incoming multicast and broadcast reach held-back apps: \(reason)")
        }
        unavailable = reason
    }
}
