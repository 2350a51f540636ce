import HeraldBroker
import HeraldFiles

#if canImport(Glibc)
    import Glibc
#endif

/// The cgroup v2 hierarchy as the kernel rules name it: where it is mounted, and the cgroups that exist in it.
struct CgroupHierarchy {
    /// Where nft looks up the paths of `socket cgroupv2` (a fixed path in nft).
    static let nftRoot = "/sys/fs/cgroup"
    /// At most this many cgroups are read; a tree larger than that is cut (and said so).
    static let cgroupLimit = 100_000

    /// The mount point of the whole hierarchy: `/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a hybrid system.
    let mountPoint: String

    /// The mount point below `/sys/fs/cgroup`, as ``EnforcementInput/cgroupMount`` takes it.
    var nftPrefix: String {
        mountPoint == Self.nftRoot ? "" : String(mountPoint.dropFirst(Self.nftRoot.count + 1))
    }

    /// The hierarchy mounted in this process's mount namespace, from the text of `/proc/self/mountinfo`; a reason
    /// when it cannot be used.
    static func find(mountinfo: String) -> Result<CgroupHierarchy, EnforcementError> {
        var found: [String] = []
        for line in mountinfo.split(separator: "\n") {
            // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTIONS
            let fields = line.split(separator: " ").map(String.init)
            guard let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields.count > 4,
                fields[dash + 1] == "cgroup2"
            else { continue }
            // A mount of a part of the tree (a cgroup namespace, a bind mount) would give the wrong levels.
            guard fields[3] == "/" else { continue }
            found.append(fields[4])
        }
        if found.contains(nftRoot) { return .success(CgroupHierarchy(mountPoint: nftRoot)) }
        if let hybrid = found.sorted().first(where: {
            $0.hasPrefix(nftRoot + "/") && !$0.dropFirst(nftRoot.count + 1).contains("/")
        }) {
            return .success(CgroupHierarchy(mountPoint: hybrid))
        }
        if let elsewhere = found.first {
            return .failure(
                .unavailable(
                    "the cgroup v2 hierarchy is mounted at \(elsewhere), but nft names cgroups below \(nftRoot): "
                        + "mount it at \(nftRoot) or \(nftRoot)/unified"))
        }
        return .failure(
            .unavailable(
                "no cgroup v2 hierarchy is mounted: the kernel can tell apps apart only by their cgroup v2 "
                    + "(mount -t cgroup2 none \(nftRoot)/unified)"))
    }

    /// The hierarchy of this process, from `/proc/self/mountinfo`.
    static func current() -> Result<CgroupHierarchy, EnforcementError> {
        guard let text = FileContents.text("/proc/self/mountinfo", limit: 4 << 20) else {
            return .failure(.unavailable("cannot read /proc/self/mountinfo"))
        }
        return find(mountinfo: text)
    }

    /// Every cgroup below the root, as paths relative to it (`system.slice/tictactoe.service`), parents first.
    func cgroups() -> [String] {
        var result: [String] = []
        var queue = [""]
        while let relative = queue.popLast(), result.count < Self.cgroupLimit {
            let directory = relative.isEmpty ? mountPoint : mountPoint + "/" + relative
            for name in Self.subdirectories(of: directory).sorted() {
                let path = relative.isEmpty ? name : relative + "/" + name
                result.append(path)
                queue.append(path)
            }
        }
        return result
    }

    /// The names of the directories in `path` (the child cgroups), by the type readdir reports.
    private static func subdirectories(of path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The cgroup of this process (the `0::` line of `/proc/self/cgroup`), relative to the root; nil in the root.
    static func ownCgroup() -> String? {
        guard let text = FileContents.text("/proc/self/cgroup", limit: 65_536) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::/") {
            let path = line.dropFirst(4)
            return path.isEmpty ? nil : String(path)
        }
        return nil
    }

    /// The unit whose own cgroup `path` is (not a cgroup below one), as systemd lays them out.
    static func unit(ofCgroup path: String) -> SystemdUnit? {
        guard let unit = SystemdUnit(cgroupPath: "/" + path), let last = path.split(separator: "/").last,
            SystemdUnit.cgroupUnescaped(last) == unit.name
        else { return nil }
        return unit
    }
}
