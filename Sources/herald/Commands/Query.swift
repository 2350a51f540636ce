import ArgumentParser
import HeraldClient
import HeraldIPC
import HeraldWire

/// `herald query NAME RRTYPE`: any record.
struct Query: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Show the records of one name and type, such as SRV, TXT, PTR, A or AAAA.",
        discussion: """
            Asks for the records on every interface, prints them as in a zone file (name, TTL, class, type, \
            data, then the interface) once answers stop coming (or --timeout passes) and exits 0; exits 1 \
            when nothing answers in time. Dots inside an instance name are written \\. as in DNS.

            Examples:
              herald query 'Living Room Printer._ipp._tcp.local' SRV
              herald query _services._dns-sd._udp.local PTR
              herald query printer.local ANY --json
            """)

    @Argument(
        help: ArgumentHelp("The owner name, such as printer.local or 'My Service._http._tcp.local'.", valueName: "name")
    )
    var name: String

    @Argument(
        help: ArgumentHelp(
            "The record type: A, AAAA, PTR, SRV, TXT, HINFO, NSEC, ANY, TYPEnnn or a number.", valueName: "rrtype"))
    var rrtype: String

    @OptionGroup var answers: AnswerOptions

    @OptionGroup var connection: ConnectionOptions

    var label: String { "query \(name) \(rrtype)" }

    var recordType: RecordType? {
        if let number = UInt16(rrtype) { return RecordType(number) }
        return RecordType(mnemonic: rrtype)
    }

    var ownerName: String { name.hasSuffix(".") ? name : name + "." }

    func validate() throws {
        guard recordType != nil else {
            throw ValidationError(
                "'\(rrtype)' is not a record type; use a name such as A, AAAA, PTR, SRV, TXT or ANY, "
                    + "TYPEnnn, or a number from 0 to 65535")
        }
        let parsed: DNSName
        do {
            parsed = try DNSName(ownerName)
        } catch {
            throw ValidationError("'\(name)' is not a domain name: \(error)")
        }
        guard parsed.isMulticastDNSName else {
            throw ValidationError(
                "'\(name)' is not a multicast DNS name; Herald answers names in .local "
                    + "(and reverse names in in-addr.arpa and ip6.arpa)")
        }
    }

    func execute() throws {
        let type = recordType!
        let session = try DaemonSession(
            socketPath: connection.socket, label: label, noWait: answers.noWait, timeout: answers.timeout)
        try session.start(.query(QueryRecordRequest(name: ownerName, rrtype: type.rawValue)), describedAs: label)
        var found: [RecordJSON] = []
        var window = AnswerWindow(timeout: answers.timeout)
        while !window.isOver {
            if let received = try session.next(until: window.endsAt), case .query(let reply) = received.reply {
                if reply.error != .noError { throw DaemonSession.failure(for: reply.error, operation: label) }
                let record = RecordJSON(
                    name: DNSName.readable(dnssdFullName: reply.fullname),
                    interface: InterfaceNames.name(of: reply.interfaceIndex),
                    interfaceIndex: reply.interfaceIndex, type: RecordText.typeName(reply.rrtype),
                    typeCode: reply.rrtype,
                    recordClass: reply.rrclass, ttl: reply.ttl,
                    data: RecordText.presentation(type: reply.rrtype, recordClass: reply.rrclass, rdata: reply.rdata),
                    rdataHex: TXTText.hex(reply.rdata))
                found.removeAll {
                    $0.interfaceIndex == record.interfaceIndex && $0.typeCode == record.typeCode
                        && $0.rdataHex == record.rdataHex
                        && $0.name.lowercased() == record.name.lowercased()
                }
                if reply.flags.contains(.add) { found.append(record) }
                window.answered()
            }
            if session.wasInterrupted { break }
        }
        session.close()
        if found.isEmpty {
            try session.requirePermission(waited: session.wasInterrupted ? nil : answers.timeout)
            throw CommandFailure(
                "no record within \(DaemonSession.seconds(answers.timeout)); check the name and type, "
                    + "or wait longer with --timeout", exitCode: ExitStatus.failure)
        }
        if answers.json {
            found.forEach(JSONLine.print)
        } else {
            var table = Table(titles: ["Name", "TTL", "Class", "Type", "Data", "Interface"])
            for record in found {
                table.append([
                    record.name, String(record.ttl), RecordText.className(record.recordClass), record.type,
                    record.data, record.interface,
                ])
            }
            table.print()
        }
    }
}
