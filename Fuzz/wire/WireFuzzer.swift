// libFuzzer target for HeraldWire (the executable target `wire-fuzzer`; Fuzz/build.sh builds it with libFuzzer and
// AddressSanitizer). It uses the module's public API only.
//
// Every check below states an invariant that holds for *every* input; a broken one traps with
// fatalError, which libFuzzer records as a crash. Inputs that are simply invalid (a parse error) are fine.

import FuzzSupport
import HeraldWire

/// libFuzzer's driver when built by Fuzz/build.sh; otherwise a replay of the files given (`FuzzSupport.main`).
@main
enum Main {
    static func main() { FuzzSupport.main(WireFuzzer.run) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    WireFuzzer.run(input)
    return 0
}

enum WireFuzzer {
    static func run(_ input: [UInt8]) {
        // 1. The input as a DNS message.
        if let message = try? DNSMessage(parsing: input) {
            checkRoundTrip(message, input: input)
            checkLimitedWriter(message)
            checkQueryPacker(message)
            // Each distinct name (by exact bytes) once, and at most 32 of them, to keep large inputs fast.
            var seen = Set<[UInt8]>()
            for name in allNames(of: message) where seen.count < 32 && seen.insert(name.wire).inserted {
                checkName(name, origin: "a name of the parsed message")
            }
            for record in message.allRecords {
                switch record.data {
                case .txt(let txt): checkTXT(txt)
                case .nsec(_, let types): checkTypeBitmap(types)
                default: break
                }
            }
            checkOrdering(allNames(of: message))
        }

        // 2. The input as names in presentation form (the whole text, and each line of it).
        if let text = String(validating: input, as: UTF8.self) {
            checkPresentation(text)
            if text.contains("\n") {
                for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                    checkPresentation(String(line))
                }
            }
            checkRenaming(text)
            // Addresses in text form: when one parses, its canonical text parses back to it.
            if let v4 = IPv4Address(text), IPv4Address(v4.description) != v4 {
                fail("IPv4Address(\(v4.description.debugDescription)) does not give back the address it came from")
            }
            if let v6 = IPv6Address(text), IPv6Address(v6.description) != v6 {
                fail("IPv6Address(\(v6.description.debugDescription)) does not give back the address it came from")
            }
        }

        // 3. The input bytes as the labels of a name (arbitrary bytes, so every escape path is taken).
        if !input.isEmpty {
            var labels: [[UInt8]] = []
            var index = 0
            while index < input.count && labels.count < 4 {
                let length = min(63, input.count - index)
                labels.append(Array(input[index..<(index + length)]))
                index += length
            }
            if let name = try? DNSName(labels: labels) { checkName(name, origin: "a name built from the input bytes") }
        }

        // 4. The input as TXT rdata and as NSEC type bit maps.
        if let txt = try? TXTRecord(rdata: input) { checkTXT(txt) }
        if let types = try? TypeBitmap(encoded: input) { checkTypeBitmap(types) }
    }

    // MARK: - Messages

    /// parse → serialize → parse gives the same message (names byte for byte), and serializing again gives
    /// the same bytes.
    static func checkRoundTrip(_ original: DNSMessage, input: [UInt8]) {
        _ = original.questions.map(\.description)
        _ = original.allRecords.map(\.description)

        let wire: [UInt8]
        do {
            wire = try original.serialized(limit: Int.max)
        } catch {
            fail("serializing a parsed message without a limit failed: \(error)")
        }
        let reparsed: DNSMessage
        do {
            reparsed = try DNSMessage(parsing: wire)
        } catch {
            fail("our own serialization of a parsed message does not parse: \(error)\nwire: \(hex(wire))")
        }
        guard reparsed == original else {
            fail("parse(serialize(m)) != m\noriginal: \(describe(original))\nreparsed: \(describe(reparsed))")
        }
        if let difference = firstDifference(original, reparsed) {
            fail("parse(serialize(m)) differs from m beyond ASCII case: \(difference)")
        }
        let again: [UInt8]
        do {
            again = try reparsed.serialized(limit: Int.max)
        } catch {
            fail("serializing a reparsed message failed: \(error)")
        }
        guard again == wire else {
            fail("serialize(parse(serialize(m))) != serialize(m)\nfirst:  \(hex(wire))\nsecond: \(hex(again))")
        }

        // The header: id and flags kept, counts match the sections.
        guard wire.count >= 12, wire[0..<4].elementsEqual(input[0..<4]) else {
            fail("serialization changed the id or flags")
        }
        let counts = [
            original.questions.count, original.answers.count, original.authorities.count,
            original.additionals.count,
        ]
        for (section, expected) in counts.enumerated()
        where Int(wire[4 + 2 * section]) << 8 | Int(wire[5 + 2 * section]) != expected {
            fail("header count of section \(section) does not match its \(expected) entries")
        }

        // Compression never makes a message larger than the same entries written without it.
        let uncompressed = uncompressedSize(original)
        guard wire.count <= uncompressed else {
            fail("serialized message takes \(wire.count) bytes, more than the \(uncompressed) it needs uncompressed")
        }

        // The output has no slack: one byte less is not a message, bytes after it are ignored.
        if (try? DNSMessage(parsing: Array(wire.dropLast()))) != nil {
            fail("our serialization still parses with its last byte removed\nwire: \(hex(wire))")
        }
        guard let padded = try? DNSMessage(parsing: wire + input.prefix(64)), padded == reparsed,
            firstDifference(padded, reparsed) == nil
        else {
            fail("trailing bytes after a message changed how it parses")
        }

        // The size limit: the default (65535) and an exact limit.
        if wire.count <= Int(UInt16.max) {
            guard (try? original.serialized()) == wire else {
                fail("serialized() differs from serialized(limit: .max)")
            }
        } else {
            expectTooLarge(original, limit: Int(UInt16.max), size: wire.count)
        }
        if original.entryCount > 0 {
            guard (try? original.serialized(limit: wire.count)) == wire else {
                fail("serialized(limit: its own size \(wire.count)) failed or differs")
            }
            expectTooLarge(original, limit: wire.count - 1, size: wire.count)
        }
    }

    static func expectTooLarge(_ message: DNSMessage, limit: Int, size: Int) {
        do {
            let bytes = try message.serialized(limit: limit)
            fail("serialized(limit: \(limit)) returned \(bytes.count) bytes for a message of \(size)")
        } catch {
            guard error == DNSWireError(offset: limit, rule: .messageTooLarge(size: size, limit: limit)) else {
                fail("serialized(limit: \(limit)) of a \(size)-byte message threw \(error)")
            }
        }
    }

    /// A writer with a limit refuses what does not fit and leaves itself unchanged, so the entries it took
    /// come out exactly as a fresh writer would write them.
    static func checkLimitedWriter(_ message: DNSMessage) {
        guard let full = try? message.serialized(limit: Int.max) else { return }
        // The limit comes from header bits (not from the input's length), so that -minimize_crash can
        // shorten an input without changing it: 1/8 ... 8/8 of the full size, 6/8 for RCODE 0.
        let eighths = (Int(message.flags.rawValue & 0x7) + 5) % 8 + 1
        let limit = 12 + (full.count - 12) * eighths / 8
        var writer = MessageWriter(id: message.id, flags: message.flags, limit: limit)
        var accepted = DNSMessage(id: message.id, flags: message.flags)
        for question in message.questions {
            let before = writer.bytes
            if writer.append(question) {
                accepted.questions.append(question)
            } else if writer.bytes != before {
                fail("a refused question changed the writer's bytes")
            }
        }
        let sections: [(MessageWriter.Section, [ResourceRecord], WritableKeyPath<DNSMessage, [ResourceRecord]>)] = [
            (.answer, message.answers, \.answers), (.authority, message.authorities, \.authorities),
            (.additional, message.additionals, \.additionals),
        ]
        for (section, records, path) in sections {
            for record in records {
                let before = writer.bytes
                if writer.append(record, to: section) {
                    accepted[keyPath: path].append(record)
                } else if writer.bytes != before {
                    fail("a refused record changed the writer's bytes")
                }
            }
        }
        let bytes = writer.message
        guard bytes.count <= limit else { fail("writer produced \(bytes.count) bytes over its limit of \(limit)") }
        guard writer.questionCount == accepted.questions.count, writer.count(of: .answer) == accepted.answers.count,
            writer.count(of: .authority) == accepted.authorities.count,
            writer.count(of: .additional) == accepted.additionals.count
        else { fail("writer counts do not match the entries it accepted") }
        guard let parsed = try? DNSMessage(parsing: bytes) else {
            fail("a limited writer's message (limit \(limit)) does not parse\nwire: \(hex(bytes))")
        }
        guard parsed == accepted, firstDifference(parsed, accepted) == nil else {
            fail("a limited writer's message does not hold the entries it accepted")
        }
        guard let fresh = try? accepted.serialized(limit: Int.max), fresh == bytes else {
            fail("after refusals (limit \(limit)) the writer's bytes differ from a fresh writer's for the same entries")
        }
    }

    /// QueryPacker: every message within the limit, parseable, nothing lost but what cannot fit alone, in
    /// order, greedy, and the TC bit set exactly on a message whose known answers continue in the next one.
    static func checkQueryPacker(_ message: DNSMessage) {
        // 512 ... 9000 bytes, from the id (not from the input's length, so minimizing keeps it); 512 for id 0.
        let limit = 512 + (Int(message.id) &* 997) % 8489
        let answers = message.allRecords
        let packed = QueryPacker.pack(questions: message.questions, knownAnswers: answers, limit: limit)
        var parsed: [DNSMessage] = []
        for (index, bytes) in packed.enumerated() {
            guard bytes.count <= limit else {
                fail("QueryPacker message \(index) takes \(bytes.count) bytes, over the limit of \(limit)")
            }
            guard let part = try? DNSMessage(parsing: bytes) else {
                fail("QueryPacker message \(index) does not parse\nwire: \(hex(bytes))")
            }
            guard part.entryCount > 0, part.authorities.isEmpty, part.additionals.isEmpty, part.id == 0,
                part.flags.rawValue & ~0x0200 == 0
            else { fail("QueryPacker message \(index) is empty or has unexpected header or sections") }
            parsed.append(part)
        }
        let expectedQuestions = message.questions.filter { fitsAlone(question: $0, limit: limit) }
        let expectedAnswers = answers.filter { fitsAlone(record: $0, limit: limit) }
        let gotQuestions = parsed.flatMap(\.questions)
        let gotAnswers = parsed.flatMap(\.answers)
        guard gotQuestions == expectedQuestions,
            zip(gotQuestions, expectedQuestions).allSatisfy({ $0.name.isIdentical(to: $1.name) })
        else {
            fail(
                "QueryPacker (limit \(limit)) sent \(gotQuestions.count) questions; \(expectedQuestions.count) fit alone"
            )
        }
        guard gotAnswers == expectedAnswers,
            zip(gotAnswers, expectedAnswers).allSatisfy({ $0.name.isIdentical(to: $1.name) })
        else {
            fail(
                "QueryPacker (limit \(limit)) sent \(gotAnswers.count) known answers; \(expectedAnswers.count) fit alone"
            )
        }
        // RFC 6762 §7.2: TC says "more known answers follow", so it is set exactly when the next message
        // carries known answers only; a message of known answers only must follow one with TC.
        for (index, part) in parsed.enumerated() {
            let continues = index + 1 < parsed.count && parsed[index + 1].questions.isEmpty
            guard part.flags.isTruncated == continues else {
                fail(
                    "QueryPacker (limit \(limit)): message \(index) of \(parsed.count) has TC "
                        + "\(part.flags.isTruncated ? "set" : "clear") but the next message "
                        + (index + 1 < parsed.count
                            ? (continues ? "has known answers only" : "has questions") : "does not exist"))
            }
        }
        // Greedy: a message was closed only because the next entry did not fit in it.
        for index in 0..<max(0, parsed.count - 1) {
            var grown = parsed[index]
            let next = parsed[index + 1]
            if let question = next.questions.first {
                grown.questions.append(question)
            } else if let answer = next.answers.first {
                grown.answers.append(answer)
            }
            grown.flags = DNSFlags()
            if let size = try? grown.serialized(limit: Int.max).count, size <= limit {
                fail(
                    "QueryPacker (limit \(limit)) closed message \(index) although the next entry fit in it (\(size) bytes)"
                )
            }
        }
    }

    static func fitsAlone(question: DNSQuestion, limit: Int) -> Bool {
        var writer = MessageWriter(limit: limit)
        return writer.append(question)
    }

    static func fitsAlone(record: ResourceRecord, limit: Int) -> Bool {
        var writer = MessageWriter(limit: limit)
        return writer.append(record, to: .answer)
    }

    // MARK: - Names

    /// Presentation text: when it parses, the name's own text parses back to the same bytes.
    static func checkPresentation(_ text: String) {
        guard let name = try? DNSName(text) else { return }
        checkName(name, origin: "DNSName(\(text.debugDescription))")
    }

    static func checkName(_ name: DNSName, origin: String) {
        let wire = name.wire
        guard name.wireLength == wire.count + 1, name.wireLength <= DNSName.maxWireLength else {
            fail("\(origin): wireLength \(name.wireLength) is wrong or over 255")
        }
        let labels = name.labels
        guard labels.allSatisfy({ (1...DNSName.maxLabelLength).contains($0.count) }), labels.count == name.labelCount,
            name.labelOffsets.count == labels.count, name.isRoot == labels.isEmpty
        else { fail("\(origin): inconsistent labels \(labels)") }
        guard name.compacted().isIdentical(to: name), name.compacted() == name else {
            fail("\(origin): compacted() changed the name")
        }
        guard let rebuilt = try? DNSName(labels: labels), rebuilt.isIdentical(to: name) else {
            fail("\(origin): DNSName(labels: name.labels) is not the same name")
        }

        // Presentation round trip.
        let text = name.description
        let back: DNSName
        do {
            back = try DNSName(text)
        } catch {
            fail(
                "\(origin): its presentation form \(text.debugDescription) does not parse: \(error)\nwire: \(hex(wire))"
            )
        }
        guard back == name, back.isIdentical(to: name) else {
            fail("\(origin): DNSName(\(text.debugDescription)) gives wire \(hex(back.wire)), not \(hex(wire))")
        }
        guard back.description == text else {
            fail(
                "\(origin): presentation form is not stable: \(text.debugDescription) then \(back.description.debugDescription)"
            )
        }
        for label in labels {
            let single = DNSName.presentation(ofLabel: label)
            guard let parsed = try? DNSName(single), parsed.labels == [label] else {
                fail("\(origin): label presentation \(single.debugDescription) does not parse back to \(hex(label))")
            }
        }

        // Case folding: equal to its lowercased self, with the same hash; identical only when already lower case.
        let lower = name.lowercased
        guard lower == name, lower.hashValue == name.hashValue, !(lower < name), !(name < lower) else {
            fail("\(origin): a name and its lowercased form disagree in ==, hash or order")
        }
        let hasUpper = wire.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        guard lower.isIdentical(to: name) == !hasUpper else {
            fail("\(origin): isIdentical(to: lowercased) is wrong")
        }

        // Suffixes and parents.
        var parent: DNSName? = name
        var count = labels.count
        while let current = parent {
            guard current.labelCount == count, name.hasSuffix(current),
                name.suffix(labelCount: count).isIdentical(to: current)
            else { fail("\(origin): suffix of \(count) labels is inconsistent") }
            parent = current.parent
            count -= 1
        }
        guard count == -1 else { fail("\(origin): the parent chain has the wrong length") }
        if let first = name.firstLabel {
            guard first == labels[0], let again = try? name.parent!.prepending(label: first),
                again.isIdentical(to: name)
            else { fail("\(origin): firstLabel + parent is not the name") }
        }
        if let doubled = try? name.appending(name) {
            guard doubled.labels == labels + labels, doubled.hasSuffix(name) else {
                fail("\(origin): appending gives the wrong labels")
            }
        } else if 2 * wire.count + 1 <= DNSName.maxWireLength {
            fail("\(origin): appending a name to itself failed although it fits")
        }

        checkServiceNames(name, origin: origin)

        // On the wire, as a question's name.
        let question = DNSMessage(questions: [DNSQuestion(name: name, type: .any)])
        guard let bytes = try? question.serialized(), let parsed = try? DNSMessage(parsing: bytes),
            parsed.questions.count == 1, parsed.questions[0].name.isIdentical(to: name)
        else { fail("\(origin): the name does not survive the wire as a question") }
    }

    // MARK: - DNS-SD names

    /// A name that reads as a service type or a service instance name: its parts rebuild the name, and its
    /// text form parses back to the same value.
    static func checkServiceNames(_ name: DNSName, origin: String) {
        let local: DNSName = "local."
        if let type = try? ServiceType(fullName: name) {
            let text = type.description
            guard let again = try? ServiceType(text), again == type, again.subtype == type.subtype,
                again.name == type.name, again.transport == type.transport
            else {
                fail("\(origin): ServiceType(\(text.debugDescription)) does not give back the type read from the name")
            }
            guard let fromFull = try? ServiceType(fullName: type.fullName), fromFull == type,
                fromFull.subtype == type.subtype
            else { fail("\(origin): ServiceType(fullName: type.fullName) differs from the type") }
            let ownLabels = type.hasSubtype ? 4 : 2
            let expected = name.labelCount > ownLabels ? name : (try? name.appending(local))
            guard let expected, type.fullName == expected else {
                fail("\(origin): ServiceType(fullName:) gives full name \(type.fullName), not the name it read")
            }
            guard type.baseType.fullName == type.baseTypeName, !type.baseType.hasSubtype,
                type.fullName.hasSuffix(type.baseTypeName), type.baseTypeName.hasSuffix(type.domain)
            else { fail("\(origin): the base type of \(text.debugDescription) is inconsistent") }
        }
        if let instance = try? ServiceInstanceName(fullName: name) {
            let text = instance.description
            guard let again = try? ServiceInstanceName(parsing: text), again == instance,
                again.instance.utf8.elementsEqual(instance.instance.utf8), again.type == instance.type
            else {
                fail(
                    "\(origin): ServiceInstanceName(parsing: \(text.debugDescription)) does not give back the instance")
            }
            let expected = name.labelCount > 3 ? name : (try? name.appending(local))
            guard let expected, instance.fullName == expected,
                instance.fullName.firstLabel == name.firstLabel,
                instance.instance.utf8.elementsEqual(name.firstLabel ?? [])
            else {
                fail(
                    "\(origin): ServiceInstanceName(fullName:) gives full name \(instance.fullName), not the name it read"
                )
            }
            for attempt in [1, 2, 37] {
                guard let renamed = try? instance.renamed(attempt: attempt) else { continue }
                guard renamed.type == instance.type,
                    renamed.instance.utf8.count <= ServiceInstanceName.maxInstanceLength,
                    renamed.fullName.wireLength <= DNSName.maxWireLength,
                    attempt < 2 || endsWith(renamed.instance, " (\(attempt))")
                else { fail("\(origin): renamed(attempt: \(attempt)) gives \(renamed.description.debugDescription)") }
            }
        }
    }

    /// Conflict renaming of arbitrary text always fits in a label and carries the counter.
    static func checkRenaming(_ text: String) {
        for attempt in [1, 2, 1234] {
            let instance = ServiceInstanceName.renamed(text, attempt: attempt)
            guard instance.utf8.count <= ServiceInstanceName.maxInstanceLength,
                attempt < 2 || endsWith(instance, " (\(attempt))")
            else { fail("renamed(\(text.debugDescription), attempt: \(attempt)) gives \(instance.debugDescription)") }
            let host = ServiceInstanceName.renamedHost(text, attempt: attempt)
            guard host.utf8.count <= DNSName.maxLabelLength, attempt < 2 || endsWith(host, "-\(attempt)") else {
                fail("renamedHost(\(text.debugDescription), attempt: \(attempt)) gives \(host.debugDescription)")
            }
        }
    }

    /// Canonical order is a strict weak order consistent with ==.
    static func checkOrdering(_ names: [DNSName]) {
        for (a, b) in zip(names, names.dropFirst()).prefix(64) {
            let less = a < b
            let greater = b < a
            if less && greater { fail("names are both < and > each other: \(a) \(b)") }
            if (a == b) != (!less && !greater) { fail("canonical order disagrees with ==: \(a) \(b)") }
        }
    }

    // MARK: - TXT and NSEC

    static func checkTXT(_ txt: TXTRecord) {
        _ = txt.description
        let strings = txt.strings
        var joined: [UInt8] = []
        for string in strings {
            joined.append(UInt8(string.count))
            joined.append(contentsOf: string)
        }
        guard joined == txt.rdata else { fail("TXT strings do not make up the rdata \(hex(txt.rdata))") }
        if !strings.isEmpty {
            guard let rebuilt = try? TXTRecord(strings: strings.map(Array.init)), rebuilt == txt else {
                fail("TXTRecord(strings: txt.strings) differs from the record")
            }
        }
        let entries = txt.entries
        var keys = Set<String>()
        for (index, entry) in entries.enumerated() {
            guard keys.insert(entry.key.lowercased()).inserted else {
                fail("TXT entries repeat key \(entry.key.debugDescription)")
            }
            // The lookups below are linear each; checking the first 16 keys keeps large records fast.
            guard index < 16 else { continue }
            guard !entry.key.isEmpty, txt.contains(key: entry.key) else {
                fail("TXT key \(entry.key.debugDescription) not found")
            }
            guard case .some(let value) = txt[entry.key], value == entry.value else {
                fail("TXT subscript[\(entry.key.debugDescription)] differs from the entry")
            }
        }
        // When every key is valid, the entries rebuild a record with the same entries.
        if entries.allSatisfy({ (try? TXTRecord.validate(key: $0.key)) != nil }) {
            do {
                let rebuilt = try TXTRecord(entries: entries)
                guard rebuilt.entries == entries else { fail("TXTRecord(entries: txt.entries).entries differs") }
            } catch {
                fail("TXTRecord(entries: txt.entries) with valid keys threw \(error)")
            }
        }
    }

    static func checkTypeBitmap(_ bitmap: TypeBitmap) {
        _ = bitmap.description
        let types = bitmap.types
        for (a, b) in zip(types, types.dropFirst()) where !(a < b) {
            fail("NSEC types not strictly increasing: \(types)")
        }
        for type in types {
            guard bitmap.contains(type) else { fail("NSEC bit map lists \(type) but does not contain it") }
            if type.rawValue < UInt16.max, !types.contains(RecordType(type.rawValue + 1)),
                bitmap.contains(RecordType(type.rawValue + 1))
            {
                fail("NSEC bit map contains \(type.rawValue + 1) but does not list it")
            }
        }
        let rebuilt = TypeBitmap(types: types)
        guard rebuilt.types == types, (try? TypeBitmap(encoded: rebuilt.encoded)) == rebuilt else {
            fail("TypeBitmap(types: bitmap.types) does not give the same types or is not valid")
        }
    }

    // MARK: - Helpers

    static func dataNames(_ data: RecordData) -> [DNSName] {
        switch data {
        case .ptr(let name), .cname(let name): return [name]
        case .srv(let srv): return [srv.target]
        case .nsec(let next, _): return [next]
        default: return []
        }
    }

    static func allNames(of message: DNSMessage) -> [DNSName] {
        var names = message.questions.map(\.name)
        for record in message.allRecords {
            names.append(record.name)
            names += dataNames(record.data)
        }
        return names
    }

    /// Where two messages that are == differ in the bytes of a name, if they do.
    static func firstDifference(_ a: DNSMessage, _ b: DNSMessage) -> String? {
        for (index, (x, y)) in zip(a.questions, b.questions).enumerated() where !x.name.isIdentical(to: y.name) {
            return "question \(index) name \(hex(x.name.wire)) vs \(hex(y.name.wire))"
        }
        for (index, (x, y)) in zip(a.allRecords, b.allRecords).enumerated() {
            if !x.name.isIdentical(to: y.name) {
                return "record \(index) owner \(hex(x.name.wire)) vs \(hex(y.name.wire))"
            }
            for (m, n) in zip(dataNames(x.data), dataNames(y.data)) where !m.isIdentical(to: n) {
                return "record \(index) data name \(hex(m.wire)) vs \(hex(n.wire))"
            }
        }
        return nil
    }

    static func uncompressedSize(_ message: DNSMessage) -> Int {
        var size = 12
        for question in message.questions { size += question.name.wireLength + 4 }
        for record in message.allRecords {
            size += record.name.wireLength + 10
            switch record.data {
            case .a: size += 4
            case .aaaa: size += 16
            case .ptr(let name), .cname(let name): size += name.wireLength
            case .srv(let srv): size += 6 + srv.target.wireLength
            case .txt(let txt): size += txt.rdata.count
            case .hinfo(let cpu, let os): size += 2 + min(cpu.count, 255) + min(os.count, 255)
            case .nsec(let next, let types): size += next.wireLength + types.encoded.count
            case .opt(let bytes), .opaque(let bytes): size += bytes.count
            }
        }
        return size
    }

    /// Suffix test on UTF-8 bytes (String.hasSuffix compares grapheme clusters, and a counter's leading
    /// space can join the cluster before it).
    static func endsWith(_ text: String, _ suffix: String) -> Bool {
        text.utf8.count >= suffix.utf8.count && text.utf8.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
    }

    static func describe(_ message: DNSMessage) -> String {
        (message.questions.map(\.description) + message.allRecords.map(\.description)).joined(separator: " | ")
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    static func fail(_ message: String) -> Never {
        fatalError("HeraldWire fuzz invariant broken: " + message)
    }
}
