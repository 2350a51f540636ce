import Foundation

/// A LAN on which Avahi's own tools run twice, once through heraldd and once through avahi-daemon, so that their
/// outputs can be compared: host 0 runs heraldd on a private system bus (no avahi-daemon), host 1 is a
/// python-zeroconf peer, host 2 runs avahi-daemon on its own bus, and any further hosts are left for the test.
final class AvahiSideBySide {
    let lan: TestLAN
    let bus: HeraldOnTestLANs.AvahiDBusAPITests.PrivateBus
    let daemon: HeraldDaemon
    let avahi: AvahiDaemon
    /// The python-zeroconf publisher, when a script was given.
    let peer: RunningProcess?

    var heraldHost: TestLAN.Host { lan.hosts[0] }
    var peerHost: TestLAN.Host { lan.hosts[1] }
    var avahiHost: TestLAN.Host { lan.hosts[2] }

    /// `peerScript` runs on the peer (IPv4 only) and must print `registered` once it has published.
    init(hosts: Int = 3, peerScript: String?) throws {
        precondition(hosts >= 3)
        lan = try TestLAN(hosts: hosts)
        do {
            bus = try HeraldOnTestLANs.AvahiDBusAPITests.PrivateBus(on: lan.hosts[0])
        } catch {
            lan.shutdown()
            throw error
        }
        do {
            daemon = try lan.hosts[0].startHeraldd(launcher: ["env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)"])
            guard daemon.logShows("D-Bus API: serving org.freedesktop.Avahi", timeout: 10) else {
                throw HarnessError.setup("heraldd does not serve the D-Bus API:\n\(daemon.log)")
            }
            avahi = try lan.hosts[2].startAvahi()
            if let peerScript {
                let peer = try lan.hosts[1].startZeroconf(script: peerScript, ipv6: false)
                try peer.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
                self.peer = peer
            } else {
                peer = nil
            }
        } catch {
            bus.remove()
            lan.shutdown()
            throw error
        }
    }

    /// `argv` on the Herald host, with heraldd's private bus as the system bus.
    func throughHeraldd(_ argv: [String], timeout: TimeInterval = 20) throws -> CommandResult {
        try heraldHost.run(argv, timeout: timeout, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    }

    /// `argv` on the Avahi host, with its own system bus (the one avahi-daemon serves).
    func throughAvahi(_ argv: [String], timeout: TimeInterval = 20) throws -> CommandResult {
        try avahiHost.run(argv, timeout: timeout)
    }

    /// What must differ between the two sides, each side's own value to the same placeholder: the host that runs
    /// the daemon (`SELF`) and its addresses.
    var ownNames: (herald: [String: String], avahi: [String: String]) {
        func names(of host: TestLAN.Host, hostName: String) -> [String: String] {
            [hostName: "SELF", host.ipv4: "SELF-IPV4", host.ipv6: "SELF-IPV6", host.linkLocal: "SELF-LINK-LOCAL"]
        }
        return (names(of: heraldHost, hostName: daemon.hostName), names(of: avahiHost, hostName: avahi.hostName))
    }

    func shutDown() {
        lan.shutdown()
        bus.remove()
    }
}

/// One command's output through each daemon, compared after normalising what must differ.
struct SideBySideOutputs: CustomStringConvertible {
    var command: String
    var herald: CommandResult
    var avahi: CommandResult
    var heraldLines: [String]
    var avahiLines: [String]
    var heraldErrors: [String]
    var avahiErrors: [String]

    /// `replacing` maps each side's own names and addresses to placeholders (`AvahiSideBySide.ownNames`).
    init(
        command: String, herald: CommandResult, avahi: CommandResult,
        replacing: (herald: [String: String], avahi: [String: String])
    ) {
        self.command = command
        self.herald = herald
        self.avahi = avahi
        heraldLines = Self.normalised(herald.stdout, replacing: replacing.herald)
        avahiLines = Self.normalised(avahi.stdout, replacing: replacing.avahi)
        heraldErrors = Self.normalised(herald.stderr, replacing: replacing.herald)
        avahiErrors = Self.normalised(avahi.stderr, replacing: replacing.avahi)
    }

    /// Same lines on stdout and stderr and the same exit status, after normalising.
    var match: Bool {
        heraldLines == avahiLines && heraldErrors == avahiErrors && herald.status == avahi.status
            && !herald.timedOut && !avahi.timedOut
    }

    /// Lines sorted, with the interface field of `avahi-browse -p` lines (each host names and numbers its own)
    /// and each side's own names replaced.
    static func normalised(_ text: String, replacing names: [String: String]) -> [String] {
        // Longest first, so that an address is not replaced inside a longer one.
        let replacements = names.filter { !$0.key.isEmpty }.sorted { $0.key.count > $1.key.count }
        return text.split(separator: "\n").map { line in
            var fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            if fields.count > 2, ["+", "-", "="].contains(fields[0]) { fields[1] = "IF" }
            var normal = fields.joined(separator: ";")
            for (value, placeholder) in replacements {
                normal = replacingWhole(value, with: placeholder, in: normal)
            }
            return normal
        }.sorted()
    }

    /// `text` with every occurrence of `value` that is not part of a longer name or address (no letter, digit, `-`
    /// or `:` either side, no `.` and a digit after) replaced.
    static func replacingWhole(_ value: String, with placeholder: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        func isPart(_ character: Character?) -> Bool {
            guard let character else { return false }
            return character.isLetter || character.isNumber || character == "-" || character == ":"
        }
        while let range = rest.range(of: value) {
            let before = range.lowerBound == rest.startIndex ? result.last : rest[rest.index(before: range.lowerBound)]
            let after = range.upperBound == rest.endIndex ? nil : rest[range.upperBound]
            let afterDigit =
                after == "." && rest.index(after: range.upperBound) < rest.endIndex
                && rest[rest.index(after: range.upperBound)].isNumber
            if !isPart(before) && !isPart(after) && !afterDigit {
                result += rest[..<range.lowerBound] + placeholder
            } else {
                result += rest[..<range.upperBound]
            }
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    /// Both outputs, raw, then the normalised lines in two columns, marking the lines only one side printed.
    var description: String {
        func raw(_ result: CommandResult) -> String {
            "exit \(result.status)\(result.timedOut ? " (timed out)" : "")\n"
                + (result.stdout.isEmpty ? "" : "stdout:\n" + result.stdout)
                + (result.stderr.isEmpty ? "" : "stderr:\n" + result.stderr)
        }
        let left = heraldLines + heraldErrors.map { "(stderr) " + $0 } + ["(exit \(herald.status))"]
        let right = avahiLines + avahiErrors.map { "(stderr) " + $0 } + ["(exit \(avahi.status))"]
        let width = min(90, max(20, left.map(\.count).max() ?? 0))
        var columns = ""
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : ""
            let r = index < right.count ? right[index] : ""
            let mark = l == r ? " " : "≠"
            columns += l.padding(toLength: width, withPad: " ", startingAt: 0) + " \(mark) " + r + "\n"
        }
        return """
            ==== \(command): \(match ? "same" : "DIFFERENT")
            -- through heraldd: \(raw(herald))
            -- through avahi-daemon: \(raw(avahi))
            -- normalised, heraldd | avahi-daemon:
            \(columns)
            """
    }
}
