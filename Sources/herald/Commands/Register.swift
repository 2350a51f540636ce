import ArgumentParser
import HeraldClient
import HeraldIPC
import HeraldWire

/// `herald register NAME TYPE PORT [KEY=VALUE …]`: advertises a service until interrupted.
struct Register: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Advertise a service on the local network until interrupted.",
        discussion: """
            The daemon probes the name first. When another host already uses it, Herald picks the next free \
            one ("Name (2)", …) unless --no-rename is given; herald prints the name finally registered on a + \
            line (and again if a later conflict renames it). On Ctrl-C or SIGTERM (or when --timeout ends) \
            herald closes its connection, the daemon withdraws the service with goodbye packets, and herald \
            prints a - line and exits 0. If an operator takes permission back while it runs, the daemon \
            withdraws the service at once: herald prints the - line then, and waits for permission again.

            TXT entries are KEY=VALUE, KEY= (empty value) or KEY alone (a boolean flag); keys are printable \
            ASCII without '=' and unique; a key or value may give any byte as \\xHH and a backslash as \\\\ \
            (as herald resolve shows them).

            Examples:
              herald register "Web Files" _http._tcp 8080 path=/files
              herald register Printer _ipp._tcp 631 txtvers=1 --subtype _universal
            """)

    @Argument(
        help: ArgumentHelp(
            "The instance name people see, such as \"Living Room Printer\" (at most 63 bytes; spaces and dots allowed; empty for the host's name).",
            valueName: "name"))
    var name: String

    @Argument(help: ArgumentHelp("The service type, such as _http._tcp.", valueName: "type"))
    var type: String

    @Argument(help: ArgumentHelp("The port the service listens on (0–65535).", valueName: "port"))
    var port: Int

    @Argument(help: ArgumentHelp("TXT record entries: KEY=VALUE, KEY= or KEY.", valueName: "key=value"))
    var txt: [String] = []

    @Option(
        name: .customLong("subtype"),
        help: ArgumentHelp(
            "Also advertise under this subtype, such as _printer (repeatable; _printer._sub._http._tcp works too).",
            valueName: "subtype"))
    var subtypes: [String] = []

    @Option(
        help: ArgumentHelp(
            "The host that offers the service (the SRV target), such as printer.local. Default: this host.",
            valueName: "host"))
    var host: String?

    @Flag(name: .customLong("no-rename"), help: "Fail (exit 1) when the name is taken instead of picking a free one.")
    var noRename = false

    @Option(
        help: ArgumentHelp(
            "Withdraw the service and exit after this many seconds. Default: run until interrupted.",
            valueName: "seconds"))
    var timeout: Double?

    @Flag(help: "Print one JSON object per event instead of text.")
    var json = false

    @Flag(
        name: .customLong("no-wait"),
        help: "Exit 77 at once instead of waiting when the daemon holds the request for permission.")
    var noWait = false

    @OptionGroup var connection: ConnectionOptions

    var label: String { "register \"\(name)\" \(type)" }

    func validate() throws {
        try validateTimeout(timeout)
        let parsed: ServiceType
        do {
            parsed = try ServiceType(type)
        } catch {
            throw ValidationError("\(error). Types look like _http._tcp")
        }
        guard !parsed.hasSubtype else {
            throw ValidationError(
                "give the type without its subtype and the subtype with --subtype: "
                    + "\(parsed.baseType) --subtype \(DNSName.presentation(ofLabel: parsed.subtype!))")
        }
        guard parsed.domain == ServiceType.defaultDomain else {
            throw ValidationError("'\(type)' is in the domain \(parsed.domain); Herald advertises only in local.")
        }
        if !name.isEmpty {
            do {
                try ServiceInstanceName.validate(instance: name)
            } catch {
                throw ValidationError("'\(name)' cannot be an instance name: \(error)")
            }
        }
        guard (0...65535).contains(port) else {
            throw ValidationError("port \(port) is out of range; give a port from 0 to 65535")
        }
        let record = try TXTArguments.record(from: txt)
        // Even at the largest message size (9000 bytes, the default), the TXT record must go out in one message.
        let most = MessageSizeLimit.default.largestServiceRecordData(type: parsed.fullName)
        guard record.rdata.count <= most else {
            throw ValidationError(
                "the TXT record would be \(record.rdata.count) bytes, more than one mDNS message holds "
                    + "(at most \(most) bytes for \(parsed.baseType)); give fewer or shorter entries")
        }
        _ = try subtypeLabels(of: parsed)
        if let host {
            do {
                _ = try DNSName(Self.hostName(host))
            } catch {
                throw ValidationError("'\(host)' is not a host name: \(error)")
            }
        }
    }

    /// The subtype labels, normalised: `_printer` from `_printer`, `printer` or `_printer._sub._http._tcp`.
    func subtypeLabels(of type: ServiceType) throws(ValidationError) -> [String] {
        var labels: [String] = []
        for text in subtypes {
            var label = text
            if text.contains("._sub.") {
                guard let full = try? ServiceType(text), let subtype = full.subtype, full.baseType == type else {
                    throw ValidationError(
                        "--subtype '\(text)' is not a subtype of \(type); give a label such as _printer")
                }
                label = String(decoding: subtype, as: UTF8.self)
            } else if !label.hasPrefix("_") {
                label = "_" + label
            }
            guard (2...63).contains(label.utf8.count), !label.contains(","), !label.contains("\\"), !label.contains(".")
            else {
                throw ValidationError(
                    "--subtype '\(text)' must be one label of 1–62 characters after its underscore, "
                        + "without dots, commas or backslashes, such as _printer")
            }
            labels.append(label)
        }
        return labels
    }

    /// `printer` → `printer.local.`; names with a domain keep it.
    static func hostName(_ host: String) -> String {
        let trimmed = host.hasSuffix(".") ? String(host.dropLast()) : host
        return (trimmed.contains(".") ? trimmed : trimmed + ".local") + "."
    }

    func execute() throws {
        let serviceType = try ServiceType(type)
        // The dnssd API lists subtypes after the type, comma-separated: `_http._tcp,_printer`.
        let regtype = ([serviceType.description] + (try subtypeLabels(of: serviceType))).joined(separator: ",")
        let request = RegisterServiceRequest(
            flags: noRename ? .noAutoRename : [], name: name, regtype: regtype, host: host.map(Self.hostName) ?? "",
            port: UInt16(port), txt: try TXTArguments.record(from: txt).rdata)
        let session = try DaemonSession(socketPath: connection.socket, label: label, noWait: noWait, timeout: timeout)
        let registration = try session.start(.registerService(request), describedAs: label)
        let printer = EventPrinter(json: json, typeWidth: serviceType.description.count + 1)
        let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        var registered: RegisterServiceReply?
        // A deny (or a removed manifest) withdraws a running registration: say so when it happens.
        let withdrawn = { (context: ClientContext) in
            guard context == registration, let shown = registered else { return }
            printer.registration(
                name: shown.name, requestedName: name, type: shown.regtype, domain: shown.domain,
                port: UInt16(port), added: false)
            registered = nil
        }
        while let received = try session.next(until: deadline, onParked: withdrawn) {
            guard received.context == registration, case .registerService(let reply) = received.reply else { continue }
            if reply.error != .noError { throw DaemonSession.failure(for: reply.error, operation: label) }
            guard reply.flags.contains(.add) else { continue }
            registered = reply
            printer.registration(
                name: reply.name, requestedName: name, type: reply.regtype, domain: reply.domain,
                port: UInt16(port), added: true)
        }
        // Closing the connection ends the registration: the daemon sends goodbyes at once.
        session.close()
        if let registered {
            printer.registration(
                name: registered.name, requestedName: name, type: registered.regtype,
                domain: registered.domain, port: UInt16(port), added: false)
        }
        try session.requirePermission(waited: session.wasInterrupted ? nil : timeout)
    }
}
