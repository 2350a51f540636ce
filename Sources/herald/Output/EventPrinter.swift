/// Prints the event streams of `browse`, `resolve` and `register`, in the `+`/`-` grammar of `dns-sd`
/// and `avahi-browse` for people, or as JSON lines.
///
///     14:03:27.512  +  eth0  local.  _ipp._tcp.  Living Room Printer
///     14:03:27.830  =  eth0  local.  _ipp._tcp.  Living Room Printer
///                      host       printer.local.:631
///                      addresses  192.168.1.20, fd00::20
///                      txt        txtvers=1 rp=ipp/print
///     14:05:02.004  -  eth0  local.  _ipp._tcp.  Living Room Printer
///
/// Columns have fixed widths chosen at the start (the longest interface name of the system, the type
/// browsed), so that a stream stays aligned; a longer value pushes its line to the right.
struct EventPrinter {
    let json: Bool
    let interfaceWidth: Int
    let typeWidth: Int
    private static let domainWidth = "local.".count

    init(json: Bool, typeWidth: Int) {
        self.json = json
        interfaceWidth = max("Interface".count, InterfaceNames.longestName())
        self.typeWidth = max("Type".count, typeWidth)
    }

    /// Column titles, only on a terminal.
    func header(nameTitle: String = "Name") {
        guard !json, Terminal.standardOutputIsTerminal else { return }
        let line = [
            "Time        ", "A/R".padding(1), "Interface".padding(interfaceWidth),
            "Domain".padding(Self.domainWidth), "Type".padding(typeWidth), nameTitle,
        ].joined(separator: "  ")
            .trimmingTrailingSpaces()
        StandardOutput.line([Painted(line, .dim)])
    }

    /// `+` or `-` for an instance.
    func browse(_ reply: BrowseReplyFields, added: Bool) {
        let time = Timestamp()
        if json {
            JSONLine.print(
                BrowseEventJSON(
                    time: time.iso8601, event: added ? "add" : "remove",
                    interface: InterfaceNames.name(of: reply.interfaceIndex),
                    interfaceIndex: reply.interfaceIndex, domain: reply.domain, type: reply.type, name: reply.name))
        } else {
            StandardOutput.line(
                line(
                    time, added ? "+" : "-", interfaceIndex: reply.interfaceIndex, domain: reply.domain,
                    type: reply.type, name: reply.name))
        }
    }

    /// `+` or `-` for a service type (`browse --all`).
    func serviceType(_ type: String, interfaceIndex: UInt32, domain: String, added: Bool) {
        let time = Timestamp()
        if json {
            JSONLine.print(
                BrowseEventJSON(
                    time: time.iso8601, event: added ? "add" : "remove",
                    interface: InterfaceNames.name(of: interfaceIndex),
                    interfaceIndex: interfaceIndex, domain: domain, type: type, name: nil))
        } else {
            StandardOutput.line(
                line(time, added ? "+" : "-", interfaceIndex: interfaceIndex, domain: domain, type: type, name: ""))
        }
    }

    /// `=` with the host, port, addresses and TXT record.
    func resolved(_ resolution: ServiceResolution) {
        let time = Timestamp()
        if json {
            JSONLine.print(ResolutionJSON(resolution, time: time))
            return
        }
        StandardOutput.line(
            line(
                time, "=", interfaceIndex: resolution.interfaceIndex, domain: resolution.domain,
                type: resolution.type, name: resolution.name))
        let indent = String(repeating: " ", count: 12 + 2 + 1 + 2)
        for (label, value) in ResolutionText.details(resolution) {
            StandardOutput.line(indent + label.padding(ResolutionText.labelWidth) + "  " + value)
        }
    }

    /// `+` once a registration is announced (with its final name), `-` when it is withdrawn.
    func registration(name: String, requestedName: String, type: String, domain: String, port: UInt16, added: Bool) {
        let time = Timestamp()
        let renamed = name != requestedName && !requestedName.isEmpty
        if json {
            JSONLine.print(
                RegistrationJSON(
                    time: time.iso8601, event: added ? "registered" : "withdrawn", name: name,
                    requestedName: requestedName,
                    renamed: renamed, type: type, domain: domain, port: port))
            return
        }
        var text = "  " + [domain.padding(Self.domainWidth), type.padding(typeWidth), name].joined(separator: "  ")
        if added && renamed {
            text += "  (renamed: \"\(requestedName)\" is taken, on the network or by another service of this host)"
        }
        StandardOutput.line([Painted(time.clock + "  "), Self.sign(added ? "+" : "-"), Painted(text)])
    }

    private func line(
        _ time: Timestamp, _ sign: String, interfaceIndex: UInt32, domain: String, type: String,
        name: String
    ) -> [Painted] {
        let columns = [
            InterfaceNames.name(of: interfaceIndex).padding(interfaceWidth), domain.padding(Self.domainWidth),
            name.isEmpty ? type : type.padding(typeWidth), name,
        ]
        return [
            Painted(time.clock + "  "), Self.sign(sign),
            Painted(("  " + columns.joined(separator: "  ")).trimmingTrailingSpaces()),
        ]
    }

    private static func sign(_ sign: String) -> Painted {
        switch sign {
        case "+": return Painted(sign, .green)
        case "-": return Painted(sign, .red)
        default: return Painted(sign, .cyan)
        }
    }
}

/// The fields of a browse reply herald shows.
struct BrowseReplyFields: Hashable {
    var interfaceIndex: UInt32
    var name: String
    var type: String
    var domain: String
}

/// The detail lines of a resolution, shared by `browse --resolve` and `resolve`.
enum ResolutionText {
    static let labelWidth = "addresses".count

    static func details(_ resolution: ServiceResolution) -> [(String, String)] {
        [
            ("host", "\(resolution.host):\(resolution.port)"),
            (
                "addresses",
                resolution.addresses.isEmpty ? "(none known yet)" : resolution.addresses.joined(separator: ", ")
            ),
            ("txt", TXTText.human(resolution.txt)),
        ]
    }
}

extension String {
    /// The string padded with spaces to `width` characters (never cut).
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
