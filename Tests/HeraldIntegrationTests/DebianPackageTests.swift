import Foundation
import Testing

extension HeraldOnTestLANs {
    /// The Debian package: built by `Scripts/build-deb.sh` from this run's release binaries, checked by lintian,
    /// then installed with apt into a fresh Debian 12 tree made by debootstrap, where avahi-daemon is installed
    /// first. Nothing is started: the tree has no init running, and every heraldd it runs is in a network namespace
    /// of its own.
    @Suite("The Debian package")
    struct DebianPackageTests {
        init() throws {
            try Requirements.check()
            _ = try ReleaseBinaries.directory()
        }

        /// Runs a command inside the Debian tree at `root`.
        static func inTree(_ root: String, _ command: String, timeout: TimeInterval = 300) throws -> CommandResult {
            try Command.run(
                ["chroot", root, "/bin/sh", "-c", "export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8; " + command],
                timeout: timeout)
        }

        @Test(
            "build-deb.sh makes a lintian-clean package that apt installs on a fresh Debian 12: it takes avahi-daemon's place, its heraldd runs there, and removing it gives the place back"
        )
        func packageInstallsAndGivesAvahiBack() throws {
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("herald-deb-\(UUID().uuidString)")
                .path
            let root = work + "/bookworm"
            defer {
                _ = try? Command.run(["umount", "-l", root + "/proc"])
                try? FileManager.default.removeItem(atPath: work)
            }
            let script = InstallTests.repository.appendingPathComponent("Scripts/build-deb.sh").path
            let built = try Command.run(
                ["bash", script, "--out", work + "/out", "--bin-dir", try ReleaseBinaries.directory()], timeout: 900)
            try #require(built.status == 0, "\(built)")
            let deb = try #require(
                built.stdout.split(separator: "\n").last.map(String.init), "build-deb.sh named no package")
            #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb), "\(built)")

            // What the package needs and holds.
            let depends = try Command.check(["dpkg-deb", "-f", deb, "Depends"]).stdout
            for library in ["libc6", "libsqlite3-0", "libexpat1", "libstdc++6"] {
                #expect(depends.contains(library), "Depends: \(depends)")
            }
            #expect(!depends.contains("libicu") && !depends.contains("libxml2"), "Depends: \(depends)")
            let contents = try Command.check(["dpkg-deb", "-c", deb]).stdout
            for path in [
                "./usr/bin/heraldd", "./usr/bin/herald", "./lib/systemd/system/heraldd.service",
                "./lib/systemd/system/heraldd-dnssd.socket", "./usr/lib/herald/avahi-takeover",
                "./usr/lib/herald/libdns_sd.so.1", "./etc/herald/heraldd.conf", "./usr/share/man/man8/heraldd.8.gz",
                "./lib/dbus-1/system-services/org.freedesktop.Avahi.service",
            ] {
                #expect(contents.contains(path + "\n") || contents.contains(path + " "), "\(path) not in the package")
            }

            // A fresh Debian 12, with avahi-daemon installed (kept from starting, as there is no init anyway).
            try Command.check(
                ["debootstrap", "--variant=minbase", "bookworm", root, "http://deb.debian.org/debian"], timeout: 900)
            try "#!/bin/sh\nexit 101\n".write(toFile: root + "/usr/sbin/policy-rc.d", atomically: true, encoding: .utf8)
            try Command.check(["chmod", "755", root + "/usr/sbin/policy-rc.d"])
            // heraldd reads its command line from /proc/self/cmdline.
            try Command.check(["mount", "-t", "proc", "proc", root + "/proc"])
            try FileManager.default.copyItem(atPath: deb, toPath: root + "/tmp/herald.deb")
            let avahi = try Self.inTree(
                root, "apt-get -q update && apt-get install -y -q --no-install-recommends avahi-daemon", timeout: 600)
            try #require(avahi.status == 0, "\(avahi)")

            // Enabling avahi-daemon made its alias, the unit D-Bus activation of org.freedesktop.Avahi starts.
            let activationAlias = root + "/etc/systemd/system/dbus-org.freedesktop.Avahi.service"
            let avahiAlias = try? FileManager.default.destinationOfSymbolicLink(atPath: activationAlias)
            #expect(avahiAlias?.hasSuffix("/avahi-daemon.service") == true, "\(String(describing: avahiAlias))")

            let install = try Self.inTree(root, "apt-get install -y -q /tmp/herald.deb", timeout: 600)
            try #require(install.status == 0, "\(install)")
            #expect(install.stdout.contains("heraldd now holds Avahi's place"), "\(install)")
            for unit in ["avahi-daemon.service", "avahi-daemon.socket"] {
                #expect(
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/etc/systemd/system/" + unit))
                        == "/dev/null", "\(unit) is not masked")
            }
            let dropIn = try String(
                contentsOfFile: root + "/etc/systemd/system/heraldd.service.d/avahi-takeover.conf", encoding: .utf8)
            let execStart = try #require(dropIn.split(separator: "\n").last { $0.hasPrefix("ExecStart=/usr/bin/") })
            #expect(FileManager.default.fileExists(atPath: root + "/var/lib/herald/avahi-takeover"))
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: activationAlias))
                    == "/lib/systemd/system/heraldd.service", "D-Bus activation does not start heraldd")
            #expect(try Self.inTree(root, "getent passwd herald").status == 0, "the herald user was not created")

            // The packaged heraldd runs on that system with the command line the drop-in gives it (in a network
            // namespace of its own, where it could reach no one).
            let check = try Command.run(
                ["unshare", "--net", "chroot", root]
                    + execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
                    + ["--check-config"])
            #expect(check.status == 0, "\(check)")
            #expect(check.stdout.contains("nss-socket = /run/avahi-daemon/socket"), "\(check)")
            #expect(check.stdout.contains("services-dir = /etc/herald/services.d, /etc/avahi/services"), "\(check)")

            // Removed: avahi-daemon gets its place back; the administrator's configuration stays.
            let remove = try Self.inTree(root, "apt-get remove -y -q herald", timeout: 300)
            try #require(remove.status == 0, "\(remove)")
            #expect(remove.stdout.contains("Avahi's place is given back"), "\(remove)")
            for unit in ["avahi-daemon.service", "avahi-daemon.socket"] {
                #expect(!FileManager.default.fileExists(atPath: root + "/etc/systemd/system/" + unit))
            }
            #expect(!FileManager.default.fileExists(atPath: root + "/etc/systemd/system/heraldd.service.d"))
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: activationAlias)) == avahiAlias,
                "Avahi's activation alias is not given back")
            #expect(!FileManager.default.fileExists(atPath: root + "/var/lib/herald/avahi-takeover"))
            #expect(!FileManager.default.fileExists(atPath: root + "/usr/bin/heraldd"))
            #expect(FileManager.default.fileExists(atPath: root + "/etc/herald/heraldd.conf"))
        }
    }
}
