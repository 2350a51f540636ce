import Glibc
import Testing

@testable import HeraldDaemon

/// A bound Unix datagram socket standing in for systemd's notification socket.
private final class NotifyReceiver {
    let fd: Int32
    /// The NOTIFY_SOCKET value that reaches it.
    let address: String
    private let directory: String?

    /// Binds a path socket in a fresh temporary directory, or an abstract one when `abstract`.
    init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemdError.system("socket", errno) }
        if abstract {
            directory = nil
            address = "@herald-test-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        } else {
            var template = Array("/tmp/herald-sd-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw SystemdError.system("mkdtemp", errno) }
            directory = String(cString: made)
            address = directory! + "/notify"
        }
        var (socketAddress, length) = try SystemdNotifier.unixAddress(address)
        let result = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard result == 0 else { throw SystemdError.system("bind \(address)", errno) }
    }

    deinit {
        close(fd)
        if let directory {
            unlink(directory + "/notify")
            rmdir(directory)
        }
    }

    /// The next datagram already queued, or nil.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }
}

@Suite("sd_notify")
struct SystemdNotifierTests {
    @Test("each message reaches a socket bound at a path or an abstract name", arguments: [false, true])
    func messagesReachTheSocket(abstract: Bool) throws {
        let receiver = try NotifyReceiver(abstract: abstract)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.address])
        #expect(notifier.isEnabled)

        #expect(try notifier.ready())
        #expect(receiver.receive() == "READY=1")
        try notifier.ready(status: "Serving 2 interfaces")
        #expect(receiver.receive() == "READY=1\nSTATUS=Serving 2 interfaces")
        try notifier.stopping()
        #expect(receiver.receive() == "STOPPING=1")
        try notifier.status("Probing herald.local")
        #expect(receiver.receive() == "STATUS=Probing herald.local")
        try notifier.watchdog()
        #expect(receiver.receive() == "WATCHDOG=1")

        try notifier.reloading()
        let reloading = try #require(receiver.receive()).split(separator: "\n")
        #expect(reloading.count == 2)
        #expect(reloading.first == "RELOADING=1")
        let monotonic = try #require(reloading.last)
        #expect(monotonic.hasPrefix("MONOTONIC_USEC="))
        #expect(UInt64(monotonic.dropFirst("MONOTONIC_USEC=".count)) != nil)

        // A newline in a status cannot smuggle in another assignment.
        try notifier.status("line one\nREADY=1")
        #expect(receiver.receive() == "STATUS=line one READY=1")
        #expect(receiver.receive() == nil)
    }

    @Test("without NOTIFY_SOCKET nothing is sent")
    func disabledWithoutSocket() throws {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(try notifier.ready() == false)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled == false)
    }

    @Test("a missing socket and a relative address are errors")
    func unreachableSocket() throws {
        #expect(throws: SystemdError.self) {
            try SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/herald/notify"]).ready()
        }
        #expect(throws: SystemdError.invalidAddress("relative/notify")) {
            try SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/notify"]).ready()
        }
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: SystemdError.addressTooLong(long)) {
            try SystemdNotifier(environment: ["NOTIFY_SOCKET": long]).ready()
        }
    }

    @Test("the watchdog interval comes from WATCHDOG_USEC and honours WATCHDOG_PID")
    func watchdogInterval() {
        let pid: pid_t = 4242
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000"], pid: pid).watchdogInterval == .seconds(30))
        #expect(
            SystemdNotifier(environment: ["WATCHDOG_USEC": "1500", "WATCHDOG_PID": "4242"], pid: pid).watchdogInterval
                == .microseconds(1500))
        #expect(
            SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4243"], pid: pid)
                .watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "0"], pid: pid).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "soon"], pid: pid).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: [:], pid: pid).watchdogInterval == nil)
        #expect(
            SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "x"], pid: pid)
                .watchdogInterval == nil)
    }
}

@Suite("sd_listen_fds")
struct ListenFDsTests {
    /// Opens `count` Unix stream sockets bound and listening in a temp directory and places them at
    /// consecutive descriptors from `base` (as systemd places them from 3), without close-on-exec.
    private static func passedSockets(count: Int32, base: Int32) throws -> (paths: [String], cleanup: () -> Void) {
        var template = Array("/tmp/herald-lfd-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemdError.system("mkdtemp", errno) }
        let directory = String(cString: made)
        var paths: [String] = []
        for index in 0..<count {
            let target = base + index
            #expect(fcntl(target, F_GETFD) == -1, "descriptor \(target) should be free")
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            let path = directory + "/s\(index).sock"
            var (address, length) = try SystemdNotifier.unixAddress(path)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            #expect(bound == 0)
            #expect(listen(fd, 4) == 0)
            #expect(dup2(fd, target) == target)
            close(fd)
            #expect(fcntl(target, F_GETFD) & FD_CLOEXEC == 0)
            paths.append(path)
        }
        let cleanup = {
            for index in 0..<count { close(base + index) }
            for path in paths { unlink(path) }
            rmdir(directory)
        }
        return (paths, cleanup)
    }

    @Test("named descriptors are returned by name and made close-on-exec")
    func namedDescriptors() throws {
        let base: Int32 = 611
        let (paths, cleanup) = try Self.passedSockets(count: 2, base: base)
        defer { cleanup() }
        let environment = ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "dnssd:control"]
        let passed = try ListenFDs.parse(environment: environment, firstDescriptor: base)
        #expect(passed.entries == [.init(name: "dnssd", fd: base), .init(name: "control", fd: base + 1)])
        #expect(passed.byName == ["dnssd": base, "control": base + 1])
        for fd in [base, base + 1] { #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0) }
        #expect(ListenFDs.isUnixSocket(base, path: paths[0]))
        #expect(ListenFDs.isUnixSocket(base + 1, path: paths[1]))
        #expect(!ListenFDs.isUnixSocket(base, path: paths[1]))
    }

    @Test("without LISTEN_FDNAMES every descriptor is 'unknown'; repeated names keep all descriptors")
    func unnamedAndRepeated() throws {
        let base: Int32 = 631
        let (_, cleanup) = try Self.passedSockets(count: 3, base: base)
        defer { cleanup() }
        let pid = getpid()
        let unnamed = try ListenFDs.parse(
            environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "3"], firstDescriptor: base)
        #expect(unnamed.entries.map(\.name) == ["unknown", "unknown", "unknown"])
        #expect(unnamed.descriptors(named: "unknown") == [base, base + 1, base + 2])
        let repeated = try ListenFDs.parse(
            environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "3", "LISTEN_FDNAMES": "dnssd:dnssd:control"],
            firstDescriptor: base)
        #expect(repeated.byName == ["dnssd": base, "control": base + 2])
        #expect(repeated.descriptors(named: "dnssd") == [base, base + 1])
    }

    @Test("LISTEN_PID of another process, or no variables, means no descriptors")
    func otherProcess() throws {
        let base: Int32 = 651
        let (_, cleanup) = try Self.passedSockets(count: 1, base: base)
        defer { cleanup() }
        let other = try ListenFDs.parse(
            environment: ["LISTEN_PID": "\(getpid() + 1)", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "dnssd"],
            firstDescriptor: base)
        #expect(other.isEmpty)
        // The descriptor was not touched: it is not ours to claim.
        #expect(fcntl(base, F_GETFD) & FD_CLOEXEC == 0)
        #expect(try ListenFDs.parse(environment: [:]).isEmpty)
        #expect(try ListenFDs.parse(environment: ["LISTEN_FDS": "2"]).isEmpty)
        #expect(try ListenFDs.parse(environment: ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "0"]).isEmpty)
    }

    @Test("malformed variables and closed descriptors are errors")
    func malformed() throws {
        let pid = getpid()
        #expect(throws: SystemdError.self) {
            try ListenFDs.parse(environment: ["LISTEN_PID": "me", "LISTEN_FDS": "1"])
        }
        #expect(throws: SystemdError.self) {
            try ListenFDs.parse(environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "-1"])
        }
        #expect(throws: SystemdError.self) {
            try ListenFDs.parse(environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "two"])
        }
        #expect(throws: SystemdError.self) {
            try ListenFDs.parse(
                environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "dnssd"],
                firstDescriptor: 671)
        }
        // fd 691 is not open.
        #expect(fcntl(691, F_GETFD) == -1)
        #expect(throws: SystemdError.system("fcntl F_GETFD on passed fd 691", EBADF)) {
            try ListenFDs.parse(environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "1"], firstDescriptor: 691)
        }
    }

    @Test("the process environment is read and the variables are unset afterwards")
    func processEnvironmentIsUnset() throws {
        // LISTEN_PID names another process so that fds 3… of the test runner are left alone.
        setenv("LISTEN_PID", "\(getpid() + 1)", 1)
        setenv("LISTEN_FDS", "2", 1)
        setenv("LISTEN_FDNAMES", "dnssd:control", 1)
        #expect(try ListenFDs.fromProcessEnvironment(unsetEnvironment: true).isEmpty)
        #expect(getenv("LISTEN_PID") == nil)
        #expect(getenv("LISTEN_FDS") == nil)
        #expect(getenv("LISTEN_FDNAMES") == nil)
    }
}
