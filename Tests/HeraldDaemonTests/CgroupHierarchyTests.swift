import HeraldBroker
import Testing

@testable import HeraldDaemon

@Suite("Finding the cgroup v2 hierarchy that nft names cgroups in, and the units' own cgroups")
struct CgroupHierarchyTests {
    static let v1 = "30 25 0:27 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory"

    @Test("Unified: /sys/fs/cgroup itself, named by the paths as they are")
    func unified() throws {
        let text = "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
        let hierarchy = try CgroupHierarchy.find(mountinfo: text).get()
        #expect(hierarchy.mountPoint == "/sys/fs/cgroup")
        #expect(hierarchy.nftPrefix == "")
    }

    @Test("Hybrid: /sys/fs/cgroup/unified, whose name the paths start with")
    func hybrid() throws {
        let text = Self.v1 + "\n41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
        let hierarchy = try CgroupHierarchy.find(mountinfo: text).get()
        #expect(hierarchy.mountPoint == "/sys/fs/cgroup/unified")
        #expect(hierarchy.nftPrefix == "unified")
    }

    @Test("Elsewhere, part of the tree only, or none at all: refused, saying what to do")
    func unusable() {
        let cases = [
            ("50 23 0:40 / /mnt/cg rw - cgroup2 cgroup2 rw", "mounted at /mnt/cg"),
            ("51 23 0:40 /user.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw", "no cgroup v2 hierarchy"),
            (Self.v1, "no cgroup v2 hierarchy"),
        ]
        for (text, expected) in cases {
            switch CgroupHierarchy.find(mountinfo: text) {
            case .success(let hierarchy): Issue.record("\(text) gave \(hierarchy.mountPoint)")
            case .failure(let error): #expect("\(error)".contains(expected), "\(error)")
            }
        }
    }

    @Test("A unit's own cgroup names it; a cgroup below it or outside systemd's layout does not")
    func units() {
        #expect(CgroupHierarchy.unit(ofCgroup: "system.slice/tictactoe.service")?.name == "tictactoe.service")
        let scope = CgroupHierarchy.unit(
            ofCgroup: "user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-tictactoe-7.scope")
        #expect(scope == SystemdUnit(name: "app-gnome-tictactoe-7.scope", manager: .user(uid: 1000)))
        #expect(CgroupHierarchy.unit(ofCgroup: "system.slice/tictactoe.service/worker") == nil)
        #expect(CgroupHierarchy.unit(ofCgroup: "system.slice") == nil)
        #expect(CgroupHierarchy.unit(ofCgroup: "machine/tictactoe.service") == nil)
    }
}
