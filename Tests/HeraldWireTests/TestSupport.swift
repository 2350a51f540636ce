import Foundation
import HeraldWire

/// The two capture files under `Fixtures/`, split into messages once and shared by every test.
enum Corpus {
    static let realistic = Result { try load("realistic.corpus") }
    static let large = Result { try load("large.corpus") }

    static func load(_ file: String) throws -> [[UInt8]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(file)
        let data = try Data(contentsOf: url)
        return try CorpusReader.messages(in: [UInt8](data))
    }
}

/// A small deterministic generator (SplitMix64), so that "random" tests check the same inputs on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Builds DNS messages byte by byte, for tests that need malformed or hand-compressed input.
struct WireBuilder {
    private(set) var bytes: [UInt8] = []

    /// The offset the next byte will be written at.
    var offset: Int { bytes.count }

    /// Starts with a 12-byte header.
    init(
        id: UInt16 = 0, flags: UInt16 = 0, questions: UInt16 = 0, answers: UInt16 = 0, authorities: UInt16 = 0,
        additionals: UInt16 = 0
    ) {
        for value in [id, flags, questions, answers, authorities, additionals] { u16(value) }
    }

    /// Starts with arbitrary bytes (no header).
    init(raw: [UInt8]) { bytes = raw }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func u32(_ value: UInt32) {
        u16(UInt16(value >> 16))
        u16(UInt16(value & 0xFFFF))
    }

    mutating func raw(_ values: [UInt8]) { bytes.append(contentsOf: values) }

    /// Writes labels (each as its length byte and bytes). Ends with the root label unless `terminated` is false.
    mutating func labels(_ labels: [String], terminated: Bool = true) {
        for label in labels {
            u8(UInt8(label.utf8.count))
            raw(Array(label.utf8))
        }
        if terminated { u8(0) }
    }

    /// A label of `count` copies of `byte`.
    mutating func label(repeating byte: UInt8, count: Int) {
        u8(UInt8(count))
        raw([UInt8](repeating: byte, count: count))
    }

    /// A compression pointer to `target`.
    mutating func pointer(to target: Int) { u16(0xC000 | UInt16(target)) }

    /// Type and class of a question (the name must already be written).
    mutating func questionTail(type: RecordType, classValue: UInt16 = 1) {
        u16(type.rawValue)
        u16(classValue)
    }

    /// Type, class, TTL, RDLENGTH (the name must already be written) and the record data.
    /// Returns the offset of the RDLENGTH field.
    @discardableResult
    mutating func recordTail(
        type: RecordType, classValue: UInt16 = 1, ttl: UInt32 = 120, rdlength: Int? = nil,
        rdata: [UInt8]
    ) -> Int {
        u16(type.rawValue)
        u16(classValue)
        u32(ttl)
        let lengthOffset = offset
        u16(UInt16(rdlength ?? rdata.count))
        raw(rdata)
        return lengthOffset
    }

    /// Overwrites a 16-bit field.
    mutating func set16(at position: Int, _ value: UInt16) {
        bytes[position] = UInt8(value >> 8)
        bytes[position + 1] = UInt8(value & 0xFF)
    }
}

extension DNSMessage {
    /// Every name in the message, in order: question names, then for each record its owner and the names in its data.
    var allNames: [DNSName] {
        var names = questions.map(\.name)
        for record in answers + authorities + additionals {
            names.append(record.name)
            switch record.data {
            case .ptr(let target), .cname(let target): names.append(target)
            case .srv(let srv): names.append(srv.target)
            case .nsec(let next, _): names.append(next)
            default: break
            }
        }
        return names
    }
}

/// Counts the occurrences of `needle` in `haystack`.
func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
    guard !needle.isEmpty, needle.count <= haystack.count else { return 0 }
    var count = 0
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        count += 1
    }
    return count
}
