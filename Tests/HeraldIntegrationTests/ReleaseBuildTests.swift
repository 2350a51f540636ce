import Foundation
import Testing

extension HeraldOnTestLANs {
    /// The binaries as they are shipped: `Scripts/install.sh` and `Scripts/demo.sh` build them in release mode with
    /// the Swift runtime linked in (`--static-swift-stdlib`), a different link from the debug build
    /// every other test runs.
    @Suite("The release build, as installed")
    struct ReleaseBuildTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "release heraldd and herald carry no ICU data: at most 20 and 17 MB stripped, and need only the C and C++ runtimes, SQLite, expat and libsystemd"
        )
        func releaseBinariesAreLean() throws {
            let release = try ReleaseBinaries.directory()
            // Foundation brings ICU's 30 MB of data into a binary; with FoundationEssentials, heraldd was 18.6 MB.
            for (name, limit) in [("heraldd", 20_000_000), ("herald", 17_000_000)] {
                let binary = release + "/" + name
                let stripped = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "\(name)-stripped-\(ProcessInfo.processInfo.processIdentifier)"
                ).path
                defer { try? FileManager.default.removeItem(atPath: stripped) }
                try Command.check(["strip", "-o", stripped, binary])
                let size = (try FileManager.default.attributesOfItem(atPath: stripped)[.size] as? Int) ?? Int.max
                print("release \(name): \(size) bytes stripped")
                #expect(
                    size <= limit,
                    "\(name) is \(size) bytes stripped, over \(limit): something brought Foundation (and its ICU data) back"
                )
                let needed = try ReleaseBinaries.neededLibraries(of: binary)
                #expect(!needed.isEmpty, "\(name) names no needed library: readelf -d was not read right")
                #expect(
                    !needed.contains { $0.hasPrefix("libicu") || $0.hasPrefix("libxml2") },
                    "\(name) needs ICU or libxml2 at run time: something brought Foundation back: \(needed)")
                for library in needed where !ReleaseBinaries.isAllowedLibrary(library) {
                    Issue.record(
                        "\(name) needs \(library) at run time, beyond the C and C++ runtimes, SQLite and expat: \(needed)"
                    )
                }
            }
        }

        @Test(
            "release heraldd and herald load no toolchain library, and serve: a registration is seen from another host, and a browse finds that host's service"
        )
        func releaseBinariesServe() throws {
            let release = try ReleaseBinaries.directory()
            for name in ["heraldd", "herald"] {
                let needed = try ReleaseBinaries.neededLibraries(of: release + "/" + name)
                #expect(needed.contains("libc.so.6"), "\(name): \(needed)")
                let toolchain = needed.filter {
                    ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime"].contains(
                        where: $0.hasPrefix)
                }
                #expect(
                    toolchain.isEmpty,
                    "\(name) needs the toolchain's libraries at run time: \(toolchain); rebuild it with \(ReleaseBinaries.buildCommand)"
                )
            }

            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (shipped, other) = (lan.hosts[0], lan.hosts[1])
            let daemon = try shipped.startHeraldd(binary: release + "/heraldd")
            let peer = try other.startHeraldd()
            let type = "_hrelease._tcp"

            // The shipped herald registers with the shipped daemon; the other host resolves it.
            let register = try shipped.spawn([
                release + "/herald", "register", "Shipped", type, "7600", "v=1",
                "--socket", daemon.socket,
            ])
            defer { register.terminate(grace: 1) }
            let seen = try peer.herald(["browse", type, "--resolve", "--json", "--timeout", "4"])
            let resolved = HeraldJSON.objects(seen.stdout).first {
                $0["event"] as? String == "resolved" && $0["name"] as? String == "Shipped"
            }
            #expect(resolved?["port"] as? Int == 7600, "\(seen)\nshipped heraldd:\n\(daemon.log)")
            #expect(resolved?["txt"] as? [String] == ["v=1"], "\(seen)")

            // And the shipped herald, through the shipped daemon, finds a service of the other host.
            let remote = try peer.spawnHerald(["register", "Elsewhere", type, "7601"])
            defer { remote.terminate(grace: 1) }
            let found = try shipped.run([
                release + "/herald", "browse", type, "--json", "--timeout", "4", "--socket", daemon.socket,
            ])
            let names = Set(
                HeraldJSON.objects(found.stdout).filter { $0["event"] as? String == "add" }.compactMap {
                    $0["name"] as? String
                })
            #expect(names == ["Shipped", "Elsewhere"], "\(found)\nshipped heraldd:\n\(daemon.log)")
            #expect(daemon.stop() == 0, "\(daemon.log)")
        }

        @Test(
            "release heraldd gives back what each start-up step mapped, so its peak at start is that of one step, not of all"
        )
        func startupStepsReleaseTheirPages() throws {
            let release = try ReleaseBinaries.directory()
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd(
                arguments: ["--log-level", "debug"], binary: release + "/heraldd")
            defer { daemon.stop() }
            // Loading is released before logging is set up, and logged with the next step.
            let steps = [
                "loading", "reading the configuration", "opening the permission store",
                "checking the permission store", "opening the network sockets",
                "opening the app sockets and loading apps and services",
            ]
            let lastStep = "pages released after \(steps.last!)"
            #expect(waitUntil(timeout: 10) { daemon.log.contains(lastStep) }.held, "\(daemon.log)")
            let peak = try daemon.process.statusKiB("VmHWM")
            // Lines like: start-up: pages released after opening the permission store: resident 14328 KiB -> 5496 KiB
            var largestStep = 0
            for step in steps {
                let line = daemon.log.split(separator: "\n").first { $0.contains("pages released after \(step):") }
                let figures = line.map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
                #expect(figures.count == 2, "no release logged after \(step):\n\(daemon.log)")
                guard figures.count == 2 else { continue }
                // Every step maps megabytes of code that the release gives back.
                #expect(
                    figures[1] + 1024 < figures[0], "after \(step): resident \(figures[0]) KiB -> \(figures[1]) KiB")
                largestStep = max(largestStep, figures[0])
            }
            // The peak is that of the largest step: no step maps more in its course than it holds at its end.
            #expect(peak <= largestStep + 2048, "peak \(peak) KiB, largest step \(largestStep) KiB:\n\(daemon.log)")
        }

        @Test("release heraldd has the kernel map its code page by page as it runs it, not 64 KiB around each page")
        func codeMapsPageByPage() throws {
            let heraldd = try ReleaseBinaries.directory() + "/heraldd"
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd(arguments: ["--log-level", "debug"], binary: heraldd)
            defer { daemon.stop() }
            #expect(
                waitUntil(timeout: 10) { daemon.log.contains("pages released after opening the app sockets") }.held,
                "\(daemon.log)")
            // Write-protect faults that the kernel resolves itself, without which the registration is refused, came
            // with Linux 6.7 on x86-64 (6.10 on arm64); elsewhere the kernel keeps its fault-around, and heraldd says so.
            let kernel = ProcessInfo.processInfo.operatingSystemVersion
            #if arch(x86_64)
                let supported = (kernel.majorVersion, kernel.minorVersion) >= (6, 7)
            #else
                let supported = (kernel.majorVersion, kernel.minorVersion) >= (6, 10)
            #endif
            guard supported || daemon.log.contains("start-up: file pages map one at a time") else {
                #expect(daemon.log.contains("file pages map 64 KiB at a time"), "\(daemon.log)")
                return
            }
            #expect(daemon.log.contains("start-up: file pages map one at a time"), "\(daemon.log)")

            let code = try daemon.process.mapping(of: heraldd, permissions: "r-xp")
            #expect(code.flags.contains("uw"), "heraldd's code is not registered with a userfaultfd: \(code.flags)")
            // The pages mapped, by the 64 KiB blocks the kernel would otherwise map whole: with its fault-around,
            // almost every block touched is mapped entirely (91 of 112 measured); page by page, hardly any is.
            // Some serving code runs first; should heraldd give its pages back in between (it does once quiet), the
            // reading is taken again.
            var blocks: (touched: Int, whole: Int) = (0, 0)
            for _ in 0..<3 where blocks.touched < 8 {
                _ = try daemon.control(["status"])
                blocks = try daemon.process.mappedBlocks(in: code.range, blockSize: 65536)
            }
            #expect(blocks.touched >= 8, "only \(blocks.touched) blocks of heraldd's code are mapped")
            #expect(
                blocks.whole * 4 < blocks.touched,
                "\(blocks.whole) of the \(blocks.touched) blocks of heraldd's code touched are mapped whole")
        }

        @Test("where userfaultfd is refused, release heraldd says so, keeps the kernel's mapping and serves as before")
        func serveWithoutPageByPageMapping() throws {
            let heraldd = try ReleaseBinaries.directory() + "/heraldd"
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let launcher = host.directory + "/without_userfaultfd"
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("CPrograms/without_userfaultfd.c").path
            try host.check(["cc", "-O1", "-o", launcher, source])
            let daemon = try host.startHeraldd(
                arguments: ["--log-level", "debug"], binary: heraldd,
                launcher: [launcher, String(EPERM)])
            defer { daemon.stop() }
            #expect(
                waitUntil(timeout: 10) { daemon.log.contains("pages released after opening the app sockets") }.held,
                "\(daemon.log)")
            #expect(
                daemon.log.contains(
                    "file pages map 64 KiB at a time (the kernel's fault-around): userfaultfd refused: Operation not permitted"
                ),
                "\(daemon.log)")
            let code = try daemon.process.mapping(of: heraldd, permissions: "r-xp")
            #expect(!code.flags.contains("uw"), "\(code.flags)")

            // It registers and browses as ever.
            let register = try daemon.spawnHerald(["register", "Unmapped", "_hnouffd._tcp", "7700"])
            defer { register.terminate(grace: 1) }
            let browse = try daemon.herald(["browse", "_hnouffd._tcp", "--resolve", "--json", "--timeout", "4"])
            let resolved = HeraldJSON.objects(browse.stdout).first { $0["event"] as? String == "resolved" }
            #expect(resolved?["port"] as? Int == 7700, "\(browse)\n\(daemon.log)")
        }
    }
}

/// The release binaries as the install and demo scripts build them. `Scripts/test.sh` builds them before the suite
/// runs; they cannot be built from here, since `swift test` holds the build directory's lock.
enum ReleaseBinaries {
    static let buildCommand =
        "swift build -c release --static-swift-stdlib --product heraldd && "
        + "swift build -c release --static-swift-stdlib --product herald"

    static func directory() throws -> String {
        let directory = InstallTests.repository.path + "/.build/release"
        for name in ["heraldd", "herald"] where access(directory + "/" + name, X_OK) != 0 {
            throw HarnessError.setup(
                "\(directory)/\(name) is missing: build the release binaries first (\(buildCommand)); "
                    + "Scripts/test.sh does")
        }
        return directory
    }

    /// Whether a release binary may need `library` at run time: the C library and its loader, libm, the C++
    /// runtime the Swift runtime is built on, and the system's SQLite (the permission store), expat (XML) and
    /// libsystemd (sd-bus, for Avahi's D-Bus API).
    static func isAllowedLibrary(_ library: String) -> Bool {
        let allowed: Set = [
            "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libsqlite3.so.0", "libexpat.so.1",
            "libsystemd.so.0",
        ]
        return allowed.contains(library) || (library.hasPrefix("ld-linux-") && library.hasSuffix(".so.2"))
    }

    /// The shared libraries an executable names as needed (its dynamic section's NEEDED entries).
    static func neededLibraries(of binary: String) throws -> [String] {
        let result = try Command.run(["readelf", "-d", binary])
        guard result.status == 0 else { throw HarnessError.setup("readelf -d \(binary) failed:\n\(result)") }
        // Lines like: 0x0000000000000001 (NEEDED)  Shared library: [libc.so.6]
        return result.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }
}
