import ArgumentParser
import HeraldClient
import HeraldIPC
import HeraldWire

/// `herald lookup HOST.local`: the addresses of a host.
struct Lookup: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Show the IPv4 and IPv6 addresses of a .local host.",
        discussion: """
            Asks for the host's A and AAAA records on every interface, prints the addresses found once \
            answers stop coming (or --timeout passes) and exits 0; exits 1 when nothing answers in time. \
            A name without a domain gets .local.

            Examples:
              herald lookup printer.local
              herald lookup printer --ipv6 --json
            """)

    @Argument(help: ArgumentHelp("The host name, such as printer.local.", valueName: "host"))
    var host: String

    @Flag(help: "Only IPv4 addresses (A records).")
    var ipv4 = false

    @Flag(help: "Only IPv6 addresses (AAAA records).")
    var ipv6 = false

    @OptionGroup var answers: AnswerOptions

    @OptionGroup var connection: ConnectionOptions

    var label: String { "lookup \(host)" }

    /// The host name with `.local.` added when it has no domain, and a final dot.
    var hostName: String {
        let trimmed = host.hasSuffix(".") ? String(host.dropLast()) : host
        return (trimmed.contains(".") ? trimmed : trimmed + ".local") + "."
    }

    func validate() throws {
        if ipv4 && ipv6 { throw ValidationError("--ipv4 and --ipv6 together are the default; give at most one") }
        let name: DNSName
        do {
            name = try DNSName(hostName)
        } catch {
            throw ValidationError("'\(host)' is not a host name: \(error)")
        }
        guard name.isInLocalDomain else {
            throw ValidationError(
                "'\(host)' is not in .local; Herald looks up multicast DNS names only (such as printer.local)")
        }
    }

    func execute() throws {
        let session = try DaemonSession(
            socketPath: connection.socket, label: label, noWait: answers.noWait, timeout: answers.timeout)
        let families: DNSServiceProtocol = ipv4 ? .ipv4 : ipv6 ? .ipv6 : [.ipv4, .ipv6]
        try session.start(.addrInfo(AddrInfoRequest(protocol: families, hostname: hostName)), describedAs: label)
        var found: [AddressJSON] = []
        var window = AnswerWindow(timeout: answers.timeout)
        while !window.isOver {
            if let received = try session.next(until: window.endsAt), case .addrInfo(let reply) = received.reply {
                if reply.error != .noError { throw DaemonSession.failure(for: reply.error, operation: label) }
                guard let address = AddressText.text(of: reply.rdata) else { continue }
                let entry = AddressJSON(
                    host: reply.hostname, interface: InterfaceNames.name(of: reply.interfaceIndex),
                    interfaceIndex: reply.interfaceIndex, family: AddressText.family(of: reply.rdata),
                    address: address, ttl: reply.ttl)
                found.removeAll { $0.address == address && $0.interfaceIndex == reply.interfaceIndex }
                if reply.flags.contains(.add) { found.append(entry) }
                window.answered()
            }
            if session.wasInterrupted { break }
        }
        session.close()
        if found.isEmpty {
            try session.requirePermission(waited: session.wasInterrupted ? nil : answers.timeout)
            throw CommandFailure(
                "no address within \(DaemonSession.seconds(answers.timeout)); check the host name "
                    + "(herald browse --all shows who is around) or wait longer with --timeout",
                exitCode: ExitStatus.failure)
        }
        if answers.json {
            found.forEach(JSONLine.print)
        } else {
            var table = Table(titles: ["Host", "Interface", "Address"])
            for entry in found { table.append([hostName, entry.interface, entry.address]) }
            table.print()
        }
    }
}
