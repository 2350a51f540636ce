// libFuzzer target for the static service files (Sources/HeraldConfig/ServiceFiles): Avahi `.service` XML and
// systemd `.dnssd` files. The executable target `services-fuzzer`, which Fuzz/build.sh builds with libFuzzer and
// AddressSanitizer (HeraldXML reads XML with the system's libexpat, which is linked as it is). It uses HeraldConfig's
// public API only.
//
// Input: a file's bytes, read as an Avahi file and as a .dnssd file. Every check states an invariant that
// holds for every input; a broken one traps with fatalError, which libFuzzer records as a crash. A file that
// is refused with problems is fine.

import FuzzSupport
import HeraldConfig
import HeraldWire

/// libFuzzer's driver when built by Fuzz/build.sh; otherwise a replay of the files given (`FuzzSupport.main`).
@main
enum Main {
    static func main() { FuzzSupport.main(ServiceFileFuzzer.run) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ServiceFileFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

enum ServiceFileFuzzer {
    static let file = "fuzz.service"
    static let hostName = "fuzz-host"
    static let specifiers = SystemdDNSSDFile.Specifiers(
        hostName: hostName, machineID: "0123456789abcdef0123456789abcdef", bootID: nil, kernelRelease: "6.1.0",
        architecture: "x86-64")

    static func run(_ input: [UInt8]) {
        // 1. As an Avahi service group.
        if let group = avahi(bytes: input) {
            checkServices(group.services, warnings: group.warnings, format: "Avahi")
            guard !group.services.isEmpty else { fail("an accepted Avahi file has no service") }
            if let xml = renderAvahi(group.services) {
                guard let again = avahi(text: xml) else {
                    fail("our Avahi rendering of an accepted group is refused\n\(xml)")
                }
                guard again.services == group.services else {
                    fail(
                        "an Avahi group rendered as Avahi XML reads back differently\n\(xml)\nfirst:  \(group.services)\nsecond: \(again.services)"
                    )
                }
            }
            for service in group.services.prefix(4) {
                guard let text = renderDNSSD(service) else { continue }
                guard let again = dnssd(text: text) else {
                    fail("a service of an Avahi group, written as a .dnssd file, is refused\n\(text)")
                }
                guard core(again.service) == core(service) else {
                    fail("a service of an Avahi group reads back differently from a .dnssd file\n\(text)")
                }
            }
        }

        // 2. As a systemd .dnssd file (the daemon reads these files as text).
        let text = String(decoding: input, as: UTF8.self)
        if let parsed = dnssd(text: text) {
            let service = parsed.service
            checkServices(parsed.services, warnings: parsed.warnings, format: ".dnssd")
            if let rendered = renderDNSSD(service) {
                guard let again = dnssd(text: rendered) else {
                    fail("our .dnssd rendering of an accepted file is refused\n\(rendered)")
                }
                guard again.service == service else {
                    fail(
                        "a .dnssd service rendered as .dnssd reads back differently\n\(rendered)\nfirst:  \(service)\nsecond: \(again.service)"
                    )
                }
            }
            if let xml = renderAvahi([service]) {
                guard let again = avahi(text: xml) else {
                    fail("a .dnssd service written as Avahi XML is refused\n\(xml)")
                }
                guard again.services.count == 1, core(again.services[0]) == core(service) else {
                    fail("a .dnssd service reads back differently from Avahi XML\n\(xml)")
                }
            }
        }

        // 3. The same text split into a file and a drop-in (NAME.dnssd.d/*.conf) reads as the whole does, with the
        //    drop-in's section header written out in both (each file starts outside any section).
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.count >= 2 {
            let main = lines[..<(lines.count / 2)].joined(separator: "\n")
            let rest = "[Service]\n" + lines[(lines.count / 2)...].joined(separator: "\n")
            // A continued line (a backslash at its end, before any \r) would swallow the header in the whole.
            if !(main.hasSuffix("\r") ? String(main.dropLast()) : main).hasSuffix("\\") {
                let whole = try? SystemdDNSSDFile(contents: main + "\n" + rest, file: file, specifiers: specifiers)
                let split = try? SystemdDNSSDFile(
                    contents: main, file: file, dropIns: [(file + ".d/fuzz.conf", rest)],
                    specifiers: specifiers)
                guard (whole == nil) == (split == nil), whole?.service == split?.service else {
                    fail(
                        "a .dnssd file with a drop-in reads differently from the two as one file\n\(main)\n--\n\(rest)")
                }
            }
        }
    }

    // MARK: - Parsing

    static func avahi(bytes: [UInt8]) -> AvahiServiceFile? {
        do {
            return try AvahiServiceFile(data: bytes, file: file, hostName: hostName)
        } catch {
            checkRefusal(error)
            return nil
        }
    }

    static func avahi(text: String) -> AvahiServiceFile? {
        do {
            return try AvahiServiceFile(contents: text, file: file, hostName: hostName)
        } catch {
            checkRefusal(error)
            return nil
        }
    }

    static func dnssd(text: String) -> SystemdDNSSDFile? {
        do {
            return try SystemdDNSSDFile(contents: text, file: file, specifiers: specifiers)
        } catch {
            checkRefusal(error)
            return nil
        }
    }

    /// A refused file names at least one error, each problem described and about this file.
    static func checkRefusal(_ error: ServiceFileError) {
        guard error.file == file, error.problems.contains(where: { $0.severity == .error }), !error.description.isEmpty
        else { fail("a refused file has no error problem or no description: \(error.problems)") }
        for problem in error.problems where problem.file != file || problem.message.isEmpty || (problem.line ?? 1) < 0 {
            fail("a problem is not about the file or has no message: \(problem)")
        }
    }

    /// What every accepted service satisfies.
    static func checkServices(_ services: [StaticService], warnings: [ServiceFileProblem], format: String) {
        for warning in warnings where warning.severity != .warning || warning.description.isEmpty {
            fail("\(format): an accepted file carries a problem that is not a warning: \(warning)")
        }
        for service in services {
            guard !service.name.isEmpty, service.name.utf8.count <= DNSName.maxLabelLength else {
                fail("\(format): the instance name \(service.name.debugDescription) is not a valid label")
            }
            guard !service.type.hasSubtype, service.file == file else {
                fail("\(format): a service's type has a subtype, or its file is wrong")
            }
            for subtype in service.subtypes where (try? service.type.withSubtype(subtype)) == nil {
                fail("\(format): the subtype \(subtype.debugDescription) does not make a type with \(service.type)")
            }
            guard (try? ServiceInstanceName(instance: service.name, type: service.type)) != nil else {
                fail("\(format): \(service.name.debugDescription) and \(service.type) make no instance name")
            }
            for txt in service.txtRecords where (try? TXTRecord(rdata: txt.rdata)) != txt {
                fail("\(format): a TXT record does not read back from its own rdata")
            }
        }
    }

    /// What both formats can say about a service.
    struct Core: Equatable {
        var name: String
        var type: ServiceType
        var subtypes: [String]
        var host: DNSName?
        var port: UInt16
        var txt: TXTRecord
    }

    static func core(_ service: StaticService) -> Core {
        Core(
            name: service.name, type: service.type, subtypes: service.subtypes, host: service.host, port: service.port,
            txt: service.txt)
    }

    // MARK: - Rendering

    /// A .dnssd file for a service, or nil when it holds what a .dnssd file cannot say (a host name, a name or
    /// subtype that a line cannot carry as it is).
    static func renderDNSSD(_ service: StaticService) -> String? {
        guard service.host == nil, fitsOnALine(service.name), service.subtypes.allSatisfy(isPlainSubtype) else {
            return nil
        }
        // A `%` that is part of a larger character would not be read as a specifier's `%`.
        for character in service.name where character != "%" && character.unicodeScalars.contains("%") { return nil }
        var lines = [
            "[Service]", "Name=" + service.name.replacing("%", with: "%%"),
            "Type=" + service.type.description,
        ]
        lines += service.subtypes.map { "SubType=" + $0 }
        lines.append("Port=\(service.port)")
        if let priority = service.priority { lines.append("Priority=\(priority)") }
        if let weight = service.weight { lines.append("Weight=\(weight)") }
        for txt in service.txtRecords where txt != .empty {
            // Keys byte by byte as \xHH escapes, values in base64: no quoting or whitespace questions.
            let words = txt.strings.map { string -> String in
                let bytes = Array(string)
                let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.count
                var word = bytes[..<equals].map { "\\x" + FuzzSupport.hex([$0]) }.joined()
                if equals < bytes.count { word += "=" + base64(Array(bytes[(equals + 1)...])) }
                return word
            }
            lines.append("TxtData=" + words.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An Avahi file for services of one group (same name), or nil when XML cannot carry a value as it is.
    static func renderAvahi(_ services: [StaticService]) -> String? {
        guard let name = services.first?.name, let escapedName = FuzzSupport.escapeXML(name) else { return nil }
        var xml = "<?xml version=\"1.0\" standalone='no'?>\n<service-group>\n  <name>\(escapedName)</name>\n"
        for service in services {
            guard service.subtypes.allSatisfy(isPlainSubtype),
                let type = FuzzSupport.escapeXML(service.type.description)
            else {
                return nil
            }
            xml += "  <service protocol=\"\(service.protocol.rawValue)\">\n    <type>\(type)</type>\n"
            for subtype in service.subtypes {
                guard let text = FuzzSupport.escapeXML(subtype) else { return nil }
                xml += "    <subtype>\(text)</subtype>\n"
            }
            if let host = service.host {
                guard let text = FuzzSupport.escapeXML(host.description) else { return nil }
                xml += "    <host-name>\(text)</host-name>\n"
            }
            xml += "    <port>\(service.port)</port>\n"
            if service.txt != .empty {
                for string in service.txt.strings {
                    let bytes = Array(string)
                    let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.count
                    guard let key = FuzzSupport.escapeXML(String(decoding: bytes[..<equals], as: UTF8.self)) else {
                        return nil
                    }
                    if equals < bytes.count {
                        xml +=
                            "    <txt-record value-format=\"binary-hex\">\(key)=\(FuzzSupport.hex(bytes[(equals + 1)...]))</txt-record>\n"
                    } else {
                        xml += "    <txt-record>\(key)</txt-record>\n"
                    }
                }
            }
            xml += "  </service>\n"
        }
        return xml + "</service-group>\n"
    }

    static func fitsOnALine(_ text: String) -> Bool {
        !text.contains("\n") && !text.contains("\r") && !text.hasSuffix("\\") && text.trimmingWhitespace() == text
            && ("=" + text).first == "="
    }

    /// A subtype written as a bare label, which reads back as itself.
    static func isPlainSubtype(_ label: String) -> Bool {
        fitsOnALine(label) && !label.contains(".") && !label.contains("\\")
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 63)] : "=")
            }
            index += 3
        }
        return out
    }

    static func fail(_ message: String) -> Never {
        fatalError("HeraldDaemon service-file fuzz invariant broken: " + message)
    }
}
