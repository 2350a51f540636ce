import CHeraldSystem
import Glibc

/// The sd_notify protocol, written by hand: state changes sent as datagrams of `KEY=value` lines
/// to the Unix datagram socket systemd names in `NOTIFY_SOCKET`.
///
/// `NOTIFY_SOCKET` is either a file system path (`/run/systemd/notify`) or an abstract socket name
/// written with a leading `@`. Without it (not started by systemd, or not `Type=notify`) every send is a
/// no-op that reports `false`. Each message opens, sends on and closes its own socket, as `sd_notify`
/// does, so the notifier holds no descriptor and can be copied freely.
package struct SystemdNotifier: Sendable, Equatable {
    /// Where messages go, as written in `NOTIFY_SOCKET`; nil when the daemon is not under systemd.
    package let socketAddress: String?
    /// The `WatchdogSec=` interval from `WATCHDOG_USEC`, or nil when no watchdog is set for this process
    /// (unset, zero, malformed, or `WATCHDOG_PID` naming another process). Ping at about half of it.
    package let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`, as seen by process `pid`.
    package init(environment: [String: String], pid: pid_t = getpid()) {
        if let address = environment["NOTIFY_SOCKET"], !address.isEmpty {
            socketAddress = address
        } else {
            socketAddress = nil
        }
        watchdogInterval = Self.watchdogInterval(environment: environment, pid: pid)
    }

    /// The notifier for this process's own environment. With `unsetEnvironment`, removes the three
    /// variables afterwards so that child processes do not inherit them (as `sd_notify(1, …)` does).
    package static func fromProcessEnvironment(unsetEnvironment: Bool = false) -> SystemdNotifier {
        let keys = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]
        let notifier = SystemdNotifier(environment: processEnvironment(keys))
        if unsetEnvironment { for key in keys { unsetenv(key) } }
        return notifier
    }

    /// Whether a notification socket is configured.
    package var isEnabled: Bool { socketAddress != nil }

    /// `WATCHDOG_USEC` as a duration, honouring `WATCHDOG_PID` (see `sd_watchdog_enabled`).
    static func watchdogInterval(environment: [String: String], pid: pid_t) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0,
            microseconds < UInt64(Int64.max)
        else { return nil }
        if let pidText = environment["WATCHDOG_PID"] {
            guard let watchdogPID = pid_t(pidText), watchdogPID == pid else { return nil }
        }
        return .microseconds(Int64(microseconds))
    }

    // MARK: Messages

    /// `READY=1`, with an optional `STATUS=`: start-up (or a reload) is complete.
    @discardableResult
    package func ready(status: String? = nil) throws -> Bool {
        try send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (which `Type=notify-reload` requires and older systemd
    /// ignores): a reload has begun; send `ready()` when it is done.
    @discardableResult
    package func reloading(status: String? = nil) throws -> Bool {
        try send(
            ["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"]
                + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// `STOPPING=1`: shutdown has begun.
    @discardableResult
    package func stopping(status: String? = nil) throws -> Bool {
        try send(["STOPPING=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// `STATUS=…`: a one-line status shown by `systemctl status`.
    @discardableResult
    package func status(_ text: String) throws -> Bool {
        try send(["STATUS=\(text)"])
    }

    /// `WATCHDOG=1`: the keep-alive ping.
    @discardableResult
    package func watchdog() throws -> Bool {
        try send(["WATCHDOG=1"])
    }

    /// Sends the assignments as one datagram, one per line. Returns false without sending when no socket
    /// is configured. Newlines inside a value would start a new assignment, so they are replaced by spaces.
    @discardableResult
    package func send(_ assignments: [String]) throws -> Bool {
        guard let socketAddress else { return false }
        let message = assignments.map { line in
            String(line.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        }.joined(separator: "\n")
        try Self.sendDatagram(Array(message.utf8), to: socketAddress)
        return true
    }

    // MARK: Socket

    /// Sends one datagram to the Unix datagram socket `address` (a path, or `@name` for an abstract socket).
    static func sendDatagram(_ bytes: [UInt8], to address: String) throws {
        var (socketAddress, length) = try unixAddress(address)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemdError.system("socket", errno) }
        defer { close(fd) }
        let sent = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bytes.withUnsafeBytes { buffer in
                    sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), address, length)
                }
            }
        }
        guard sent >= 0 else { throw SystemdError.system("sendto \(address)", errno) }
        guard sent == bytes.count else { throw SystemdError.shortSend(sent: sent, expected: bytes.count) }
    }

    /// A `sockaddr_un` and its length for a path or an `@`-prefixed abstract name.
    static func unixAddress(_ address: String) throws -> (sockaddr_un, socklen_t) {
        var result = sockaddr_un()
        result.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: result.sun_path)
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        let bytes: [UInt8]
        let length: Int
        if address.hasPrefix("@") {
            // Abstract namespace: a leading NUL, then the name; the length counts exactly those bytes.
            bytes = [0] + Array(address.utf8.dropFirst())
            guard bytes.count <= capacity else { throw SystemdError.addressTooLong(address) }
            length = pathOffset + bytes.count
        } else {
            guard address.hasPrefix("/") else { throw SystemdError.invalidAddress(address) }
            bytes = Array(address.utf8)
            guard bytes.count < capacity else { throw SystemdError.addressTooLong(address) }
            length = pathOffset + bytes.count + 1
        }
        withUnsafeMutableBytes(of: &result.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return (result, socklen_t(length))
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// The named variables from this process's environment.
    static func processEnvironment(_ keys: [String]) -> [String: String] {
        var environment: [String: String] = [:]
        for key in keys {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        return environment
    }
}

/// Failures of the systemd integration (sd_notify and socket activation).
package enum SystemdError: Error, Equatable, CustomStringConvertible {
    /// A system call failed with the errno.
    case system(String, Int32)
    case shortSend(sent: Int, expected: Int)
    /// `NOTIFY_SOCKET` is neither an absolute path nor `@name`.
    case invalidAddress(String)
    case addressTooLong(String)
    /// A `LISTEN_*` variable is malformed.
    case invalidEnvironment(String)

    package var description: String {
        switch self {
        case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
        case .shortSend(let sent, let expected): "sd_notify: sent \(sent) of \(expected) bytes"
        case .invalidAddress(let address): "NOTIFY_SOCKET '\(address)' is not an absolute path or @name"
        case .addressTooLong(let address): "NOTIFY_SOCKET '\(address)' is too long for a Unix socket address"
        case .invalidEnvironment(let message): message
        }
    }
}
