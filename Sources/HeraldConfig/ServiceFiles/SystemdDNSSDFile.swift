import HeraldWire

/// A systemd-resolved DNS-SD service file (systemd.dnssd(5)), as found in `/etc/systemd/dnssd/*.dnssd`:
///
/// ```ini
/// [Service]
/// Name=%H web
/// Type=_http._tcp
/// SubType=_printer
/// Port=80
/// Priority=0
/// Weight=0
/// TxtText=path=/ version=1
/// TxtData=blob=AAEC
/// ```
///
/// Each `TxtText=`/`TxtData=` line makes its own TXT record set (as systemd publishes one TXT resource
/// record per line); an empty assignment resets the list. `SubType=` may repeat; an empty assignment
/// resets it too. Unknown keys and sections are warnings; any error refuses the file.
package struct SystemdDNSSDFile: Sendable {
    package var service: StaticService
    /// Problems that did not stop the file from being used (unknown keys or sections).
    package var warnings: [ServiceFileProblem]

    package var services: [StaticService] { [service] }

    /// Reads a file and its drop-ins (the `.conf` files of `NAME.dnssd.d/`, in name order), which are read after it
    /// and change what it says as later lines do. Problems name the file they are in.
    package init(
        contents: String, file: String, dropIns: [(file: String, contents: String)] = [],
        specifiers: Specifiers
    ) throws(ServiceFileError) {
        var problems: [ServiceFileProblem] = []
        var currentFile = file
        func error(_ line: Int, _ message: String, in file: String? = nil) {
            problems.append(
                ServiceFileProblem(file: file ?? currentFile, line: line, severity: .error, message: message))
        }
        func warning(_ line: Int, _ message: String) {
            problems.append(ServiceFileProblem(file: currentFile, line: line, severity: .warning, message: message))
        }

        var section: String?
        var sawService = false
        var name: (value: String, line: Int, file: String)?
        var type: (value: String, line: Int, file: String)?
        var port: UInt16?
        var portSeen = false
        var priority: UInt16?
        var weight: UInt16?
        var subtypes: [(value: String, line: Int, file: String)] = []
        var txtSets: [(entries: [TXTEntry], line: Int, file: String)] = []

        for part in [(file: file, contents: contents)] + dropIns {
            currentFile = part.file
            section = nil
            for (line, text) in Self.logicalLines(part.contents) {
                let trimmed = text.trimmingWhitespace()
                if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
                if trimmed.hasPrefix("[") {
                    guard trimmed.hasSuffix("]"), trimmed.count >= 3 else {
                        error(line, "bad section header \"\(trimmed)\"")
                        section = nil
                        continue
                    }
                    let title = String(trimmed.dropFirst().dropLast())
                    section = title
                    if title == "Service" {
                        sawService = true
                    } else {
                        warning(line, "unknown section [\(title)] ignored")
                    }
                    continue
                }
                guard let equals = trimmed.firstIndex(of: "=") else {
                    error(line, "expected Key=Value, found \"\(trimmed)\"")
                    continue
                }
                let key = String(trimmed[..<equals]).trimmingWhitespace()
                let value = String(trimmed[trimmed.index(after: equals)...]).trimmingWhitespace()
                guard let section else {
                    error(line, "\(key)= appears before any section")
                    continue
                }
                guard section == "Service" else { continue }

                func number(_ what: String) -> UInt16? {
                    guard let n = UInt16(value) else {
                        error(line, "\(what)=\"\(value)\" is not a number from 0 to 65535")
                        return nil
                    }
                    return n
                }
                switch key {
                case "Name":
                    name = (value, line, currentFile)
                case "Type":
                    type = (value, line, currentFile)
                case "SubType":
                    if value.isEmpty { subtypes = [] } else { subtypes.append((value, line, currentFile)) }
                case "Port":
                    portSeen = true
                    port = number("Port")
                case "Priority":
                    priority = number("Priority")
                case "Weight":
                    weight = number("Weight")
                case "TxtText", "TxtData":
                    if value.isEmpty {
                        txtSets = []
                        continue
                    }
                    switch Self.txtEntries(value, binary: key == "TxtData") {
                    case .success(let entries): txtSets.append((entries, line, currentFile))
                    case .failure(let failure): error(line, "\(key)=: \(failure.text)")
                    }
                default:
                    warning(line, "unknown key \(key)= ignored")
                }
            }
        }
        // Problems found from here on are about the whole service: they name the main file (and its last line).
        currentFile = file

        if !sawService { error(1, "no [Service] section") }
        let lastLine = max(1, Self.logicalLines(contents).last?.line ?? 1)

        var instance = ""
        if let name {
            switch Self.expand(name.value, specifiers) {
            case .success(let expanded):
                if let message = ServiceFileSupport.validateInstance(expanded) {
                    error(name.line, message, in: name.file)
                } else {
                    instance = expanded
                }
            case .failure(let failure):
                error(name.line, failure.text, in: name.file)
            }
        } else if sawService {
            error(lastLine, "Name= is missing")
        }

        var serviceType: ServiceType?
        if let type {
            do {
                let parsed = try ServiceType(type.value)
                if parsed.hasSubtype {
                    error(type.line, "the type \"\(type.value)\" has a subtype; give it with SubType=", in: type.file)
                } else {
                    serviceType = parsed
                    for rule in parsed.registrationWarnings { warning(type.line, rule.description) }
                }
            } catch let failure {
                error(type.line, "bad service type \"\(type.value)\": \(failure)", in: type.file)
            }
        } else if sawService {
            error(lastLine, "Type= is missing")
        }

        // The instance and the type (with its domain) must make a name that fits in 255 bytes.
        if let serviceType, !instance.isEmpty, let name {
            do {
                _ = try ServiceInstanceName(instance: instance, type: serviceType)
            } catch let failure {
                error(name.line, "the service name and type make no valid instance name: \(failure)", in: name.file)
            }
        }

        if !portSeen && sawService {
            error(lastLine, "Port= is missing")
        }

        var subtypeLabels: [String] = []
        if let serviceType {
            for subtype in subtypes {
                switch ServiceFileSupport.subtypeLabel(subtype.value, of: serviceType) {
                case .success(let label): subtypeLabels.append(label)
                case .failure(let failure): error(subtype.line, failure.text, in: subtype.file)
                }
            }
        }

        var records: [TXTRecord] = []
        for set in txtSets {
            do {
                records.append(try TXTRecord(entries: set.entries))
            } catch let failure {
                error(set.line, "bad TXT record: \(failure)", in: set.file)
            }
        }

        if problems.contains(where: { $0.severity == .error }) {
            throw ServiceFileError(file: file, problems: problems)
        }
        guard let serviceType, let port else {
            throw ServiceFileError(file: file, problems: problems)
        }
        self.service = StaticService(
            name: instance, type: serviceType, subtypes: subtypeLabels, port: port,
            priority: priority, weight: weight, txtRecords: records, file: file)
        self.warnings = problems
    }

    package init(contents: String, file: String, hostName: String) throws(ServiceFileError) {
        try self.init(contents: contents, file: file, specifiers: Specifiers(hostName: hostName))
    }

    // MARK: - Pieces

    /// Lines with their 1-based numbers; a line ending in a backslash continues on the next (the
    /// number is the first line's).
    static func logicalLines(_ contents: String) -> [(line: Int, text: String)] {
        var result: [(line: Int, text: String)] = []
        var pending: (line: Int, text: String)?
        for (index, raw) in contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var text = String(raw)
            if text.hasSuffix("\r") { text.removeLast() }
            let number = index + 1
            if var current = pending {
                current.text += " " + text
                pending = current
            } else {
                pending = (number, text)
            }
            if text.hasSuffix("\\"), !text.trimmingWhitespace().hasPrefix("#") {
                pending!.text.removeLast()
                continue
            }
            result.append(pending!)
            pending = nil
        }
        if let pending { result.append(pending) }
        return result
    }

    /// Splits a `TxtText=`/`TxtData=` value into entries: whitespace-separated words, with `"…"` and
    /// `'…'` quoting and C escapes; each word is `KEY=VALUE` or a bare `KEY`. For `TxtData=` the value is base64.
    static func txtEntries(_ text: String, binary: Bool) -> Result<[TXTEntry], ProblemText> {
        let words: [[UInt8]]
        switch splitWords(text) {
        case .success(let w): words = w
        case .failure(let f): return .failure(f)
        }
        var entries: [TXTEntry] = []
        for word in words {
            let keyBytes: ArraySlice<UInt8>
            var value: [UInt8]?
            if let equals = word.firstIndex(of: UInt8(ascii: "=")) {
                keyBytes = word[..<equals]
                value = Array(word[(equals + 1)...])
            } else {
                keyBytes = word[...]
            }
            guard let key = String(validating: keyBytes, as: UTF8.self) else {
                return .failure(ProblemText("a key is not valid UTF-8"))
            }
            do {
                try TXTRecord.validate(key: key)
            } catch {
                return .failure(ProblemText("bad key \"\(key)\": \(error)"))
            }
            if binary, let encoded = value {
                guard let decoded = ServiceFileSupport.decodeBase64(String(decoding: encoded, as: UTF8.self)) else {
                    return .failure(ProblemText("the value of \"\(key)\" is not valid base64"))
                }
                value = decoded
            }
            entries.append(TXTEntry(key: key, value: value))
        }
        return .success(entries)
    }

    static func splitWords(_ text: String) -> Result<[[UInt8]], ProblemText> {
        let bytes = Array(text.utf8)
        var words: [[UInt8]] = []
        var current: [UInt8] = []
        var inWord = false
        var quote: UInt8?
        var i = 0
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\\") {
                i += 1
                guard i < bytes.count else { return .failure(ProblemText("the value ends with a lone backslash")) }
                let e = bytes[i]
                switch e {
                case UInt8(ascii: "n"): current.append(0x0A)
                case UInt8(ascii: "t"): current.append(0x09)
                case UInt8(ascii: "r"): current.append(0x0D)
                case UInt8(ascii: "s"): current.append(0x20)
                case UInt8(ascii: "a"): current.append(0x07)
                case UInt8(ascii: "b"): current.append(0x08)
                case UInt8(ascii: "f"): current.append(0x0C)
                case UInt8(ascii: "v"): current.append(0x0B)
                case UInt8(ascii: "x"):
                    guard i + 2 < bytes.count, let h = ServiceFileSupport.hexValue(bytes[i + 1]),
                        let l = ServiceFileSupport.hexValue(bytes[i + 2])
                    else {
                        return .failure(ProblemText("bad \\x escape"))
                    }
                    current.append(h << 4 | l)
                    i += 2
                case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: " "):
                    current.append(e)
                default:
                    return .failure(ProblemText("unknown escape \\\(Character(Unicode.Scalar(e)))"))
                }
                inWord = true
                i += 1
                continue
            }
            if let q = quote {
                if b == q { quote = nil } else { current.append(b) }
            } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                quote = b
                inWord = true
            } else if isSpace(b) {
                if inWord {
                    words.append(current)
                    current = []
                    inWord = false
                }
            } else {
                current.append(b)
                inWord = true
            }
            i += 1
        }
        if quote != nil { return .failure(ProblemText("unterminated quote")) }
        if inWord { words.append(current) }
        return .success(words)
    }
}
