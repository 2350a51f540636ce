import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the integration tests need from the machine, and how to get it.
///
/// Not being root is the one reason to skip (namespaces, veths and mounts need
/// it); anything else missing is a failure whose message names the package to
/// install, because `Scripts/install-test-deps.sh` installs all of it.
enum Requirements {
    /// Whether the tests can create network namespaces.
    static var isRoot: Bool { geteuid() == 0 }

    /// The comment shown when the suite is skipped because it is not root.
    static let notRootReason: Comment = """
        not running as root. The integration tests build a LAN out of network \
        namespaces, veth pairs and a bridge, which needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN). \
        Run `sudo Scripts/install-test-deps.sh` once, then `sudo swift test --filter HeraldIntegrationTests`.
        """

    /// One thing the tests need, and the Debian package (or pip package) that provides it.
    struct Item: Sendable, Hashable {
        var what: String
        var package: String
        var installer: String = "apt-get install"
    }

    /// Everything that is missing, listed with the fix.
    struct Missing: Error, CustomStringConvertible {
        var items: [Item]
        var description: String {
            let lines = items.map { "  - \($0.what): \($0.installer) \($0.package)" }
            return "integration test requirements missing:\n" + lines.joined(separator: "\n")
                + "\nrun `sudo Scripts/install-test-deps.sh` (installs all of them)"
        }
    }

    /// The executables the harness and the tests run, with their packages.
    static let tools: [(name: String, package: String)] = [
        ("ip", "iproute2"),
        ("nsenter", "util-linux"),
        ("unshare", "util-linux"),
        ("mount", "mount"),
        ("dbus-daemon", "dbus"),
        ("avahi-daemon", "avahi-daemon"),
        ("avahi-browse", "avahi-utils"),
        ("avahi-publish", "avahi-utils"),
        ("avahi-resolve", "avahi-utils"),
        ("dig", "dnsutils"),
    ]

    /// Throws `Missing` listing every missing tool, with the package to install.
    /// The result is computed once per process.
    static func check() throws {
        if let missing = cachedMissing.value, !missing.isEmpty {
            throw Missing(items: missing)
        }
    }

    private static let cachedMissing = Once<[Item]> {
        var missing: [Item] = []
        for tool in tools where executable(tool.name) == nil {
            missing.append(Item(what: "`\(tool.name)` not found", package: tool.package))
        }
        if python3() == nil {
            missing.append(Item(what: "`python3` not found", package: "python3"))
        } else if python3WithZeroconf() == nil {
            missing.append(
                Item(
                    what: "python module `zeroconf` not importable by python3",
                    package: "zeroconf", installer: "python3 -m pip install"))
        }
        if !FileManager.default.fileExists(atPath: "/proc/self/ns/net") {
            missing.append(
                Item(
                    what: "kernel without network namespaces", package: "(a kernel with CONFIG_NET_NS)",
                    installer: "use"))
        }
        return missing
    }

    // MARK: Finding executables

    /// Directories searched after `PATH`, so that sbin tools are found when the
    /// test runner's `PATH` lacks them.
    private static let fallbackDirectories = [
        "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
    ]

    /// The absolute path of an executable, searching `PATH` and then the usual
    /// system directories. A name containing `/` is returned as is when executable.
    static func executable(_ name: String) -> String? {
        if name.contains("/") {
            return access(name, X_OK) == 0 ? name : nil
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + fallbackDirectories
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// Like `executable(_:)`, but throws naming the package when missing.
    static func requireExecutable(_ name: String) throws -> String {
        if let path = executable(name) { return path }
        let package = tools.first { $0.name == name }?.package ?? name
        throw Missing(items: [Item(what: "`\(name)` not found", package: package)])
    }

    /// Every `python3` on `PATH`, then Debian's own.
    private static func python3Candidates() -> [String] {
        var candidates: [String] = []
        if let forced = ProcessInfo.processInfo.environment["HERALD_TEST_PYTHON"], !forced.isEmpty {
            candidates.append(forced)
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = String(directory) + "/python3"
            if access(candidate, X_OK) == 0 { candidates.append(candidate) }
        }
        candidates.append("/usr/bin/python3")
        var seen = Set<String>()
        return candidates.filter { seen.insert($0).inserted }
    }

    static func python3() -> String? {
        python3Candidates().first { access($0, X_OK) == 0 }
    }

    /// The real interpreter (resolved through shims such as pyenv's) of the first
    /// `python3` that can import `zeroconf`.
    static func python3WithZeroconf() -> String? { cachedPython.value ?? nil }

    private static let cachedPython = Once<String?> {
        for candidate in python3Candidates() where access(candidate, X_OK) == 0 {
            let result = try? Command.run(
                [candidate, "-c", "import sys, zeroconf; print(sys.executable)"], timeout: 20)
            if let result, result.status == 0 {
                let executable = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                return executable.isEmpty ? candidate : executable
            }
        }
        return nil
    }
}

/// A value computed once, on first use, thread-safely.
final class Once<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var computed: Value?
    private let compute: () -> Value

    init(_ compute: @escaping () -> Value) { self.compute = compute }

    var value: Value? {
        lock.lock()
        defer { lock.unlock() }
        if computed == nil { computed = compute() }
        return computed
    }
}
