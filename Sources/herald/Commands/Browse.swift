import ArgumentParser
import HeraldClient
import HeraldIPC
import HeraldWire
import OrderedCollections

/// `herald browse TYPE`: streams `+`/`-` events for the instances of a service type (or, with `--all`, for
/// the service types in use), optionally resolving each instance.
struct Browse: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Show the services of a type as they come and go on the local network.",
        discussion: """
            Prints one line per event: the time, + (found) or - (gone), the interface, the domain, the type \
            and the instance name. With --resolve, each instance is also resolved and shown in an = block: \
            its host and port, the host's addresses and its TXT record (non-printable bytes escaped as \\xHH). \
            With --all, the service types in use are listed instead (DNS-SD service type enumeration).

            Runs until interrupted, or for --timeout seconds (then exits 0). If the daemon holds the request \
            until an operator decides (the local-network permission model), herald says so on standard error \
            and keeps waiting; it exits 77 if permission has not come when --timeout ends, or at once with \
            --no-wait. If an operator takes permission back while it runs, everything it showed is shown \
            gone (-) and it waits again.

            Examples:
              herald browse _http._tcp
              herald browse _printer._sub._http._tcp --resolve
              herald browse --all --timeout 3 --json
            """)

    @Argument(
        help: ArgumentHelp(
            "The service type, such as _http._tcp, or a subtype, such as _printer._sub._http._tcp.", valueName: "type"))
    var type: String?

    @Flag(help: "List the service types in use on the network instead of the instances of one type.")
    var all = false

    @Flag(help: "Resolve each instance found: host, port, addresses and TXT record.")
    var resolve = false

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "Stop after this many seconds and exit 0. Default: run until interrupted.", valueName: "seconds"))
    var timeout: Double?

    @Flag(
        name: .customLong("no-wait"),
        help: "Exit 77 at once instead of waiting when the daemon holds the request for permission.")
    var noWait = false

    @OptionGroup var connection: ConnectionOptions

    var label: String { all ? "browse --all" : "browse \(type ?? "")" }

    func validate() throws {
        try validateTimeout(timeout)
        switch (type, all) {
        case (nil, false):
            throw ValidationError(
                "give a service type to browse, such as _http._tcp, or --all to list the types in use")
        case (.some(let type), true):
            throw ValidationError("give either a service type ('\(type)') or --all, not both")
        case (nil, true):
            if resolve { throw ValidationError("--resolve applies to instances of a type; leave it out with --all") }
        case (.some(let text), false):
            let parsed: ServiceType
            do {
                parsed = try ServiceType(text)
            } catch {
                throw ValidationError(
                    "\(error). Types look like _http._tcp, "
                        + "subtypes like _printer._sub._http._tcp")
            }
            guard parsed.domain == ServiceType.defaultDomain else {
                throw ValidationError("'\(text)' is in the domain \(parsed.domain); Herald browses only local.")
            }
        }
    }

    func execute() throws {
        let session = try DaemonSession(socketPath: connection.socket, label: label, noWait: noWait, timeout: timeout)
        let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        if all {
            try browseTypes(session, until: deadline)
        } else {
            try browseInstances(session, until: deadline)
        }
        session.close()
        try session.requirePermission(waited: session.wasInterrupted ? nil : timeout)
    }

    private func browseInstances(_ session: DaemonSession, until deadline: ContinuousClock.Instant?) throws {
        let type = try ServiceType(self.type ?? "")
        // The dnssd API's form for a subtype browse: `_http._tcp,_printer`.
        let regtype = type.subtype.map { "\(type.baseType),\(DNSName.presentation(ofLabel: $0))" } ?? type.description
        let printer = EventPrinter(json: json, typeWidth: type.baseType.description.count + 1)
        printer.header()
        let browse = try session.start(.browse(BrowseRequest(regtype: regtype)), describedAs: label)
        let tracker = resolve ? ResolutionTracker(session: session) : nil
        // What is shown as present, oldest first: a deny (or a removed manifest) stops the browse, and what it
        // showed is no longer known to be there.
        var shown: OrderedSet<BrowseReplyFields> = []
        let revoked = { (context: ClientContext) throws in
            guard context == browse else { return }
            defer { shown.removeAll() }
            for fields in shown {
                printer.browse(fields, added: false)
                try tracker?.stop(
                    ResolutionTracker.Instance(name: fields.name, type: fields.type, domain: fields.domain),
                    interfaceIndex: fields.interfaceIndex)
            }
        }
        while true {
            // The resolves of every instance that came in one read start together, once those replies are taken.
            if !session.hasBufferedReplies { try tracker?.startQueued() }
            let wakeAt = [deadline, tracker?.nextDue].compactMap { $0 }.min()
            if let received = try session.next(until: wakeAt, onParked: revoked) {
                if received.context == browse, case .browse(let reply) = received.reply {
                    if reply.error != .noError { throw DaemonSession.failure(for: reply.error, operation: label) }
                    let added = reply.flags.contains(.add)
                    let fields = BrowseReplyFields(
                        interfaceIndex: reply.interfaceIndex, name: reply.name,
                        type: reply.regtype, domain: reply.domain)
                    if added { shown.append(fields) } else { shown.remove(fields) }
                    printer.browse(fields, added: added)
                    let instance = ResolutionTracker.Instance(
                        name: reply.name, type: reply.regtype, domain: reply.domain)
                    if added {
                        tracker?.queueResolve(instance, interfaceIndex: reply.interfaceIndex)
                    } else {
                        try tracker?.stop(instance, interfaceIndex: reply.interfaceIndex)
                    }
                } else if let tracker, try tracker.handle(received) {
                    if ResolutionTracker.isFailure(received) {
                        throw DaemonSession.failure(for: received.reply.error, operation: label)
                    }
                }
            }
            if let tracker {
                for resolution in tracker.due() { printer.resolved(resolution) }
            }
            if session.wasInterrupted { return }
            if let deadline, ContinuousClock.now >= deadline { return }
        }
    }

    /// Service type enumeration (RFC 6763 §9): a browse of `_services._dns-sd._udp`, whose results name
    /// types the way mDNSResponder reports them (instance `_http`, type `_tcp.local.`, domain `.`).
    private func browseTypes(_ session: DaemonSession, until deadline: ContinuousClock.Instant?) throws {
        let printer = EventPrinter(json: json, typeWidth: 20)
        printer.header(nameTitle: "")
        let browse = try session.start(.browse(BrowseRequest(regtype: "_services._dns-sd._udp")), describedAs: label)
        var shown: OrderedSet<BrowseReplyFields> = []
        let revoked = { (context: ClientContext) in
            guard context == browse else { return }
            defer { shown.removeAll() }
            for fields in shown {
                printer.serviceType(
                    fields.type, interfaceIndex: fields.interfaceIndex, domain: fields.domain, added: false)
            }
        }
        while let received = try session.next(until: deadline, onParked: revoked) {
            guard received.context == browse, case .browse(let reply) = received.reply else { continue }
            if reply.error != .noError { throw DaemonSession.failure(for: reply.error, operation: label) }
            let (type, domain) = Self.serviceType(fromEnumerationName: reply.name, type: reply.regtype)
            let added = reply.flags.contains(.add)
            let fields = BrowseReplyFields(interfaceIndex: reply.interfaceIndex, name: "", type: type, domain: domain)
            if added { shown.append(fields) } else { shown.remove(fields) }
            printer.serviceType(type, interfaceIndex: reply.interfaceIndex, domain: domain, added: added)
        }
    }

    /// `_http` + `_tcp.local.` → (`_http._tcp.`, `local.`).
    static func serviceType(fromEnumerationName name: String, type: String) -> (String, String) {
        let labels = type.split(separator: ".", omittingEmptySubsequences: true)
        guard let transport = labels.first else { return (name, "local.") }
        let domain = labels.dropFirst().joined(separator: ".")
        return ("\(name).\(transport).", domain.isEmpty ? "local." : domain + ".")
    }
}
