/// Builds one message incrementally, compressing every name it can (RFC 1035 §4.1.4, RFC 6762 §18.14),
/// including names inside PTR, CNAME, SRV and NSEC record data, within a size limit. A message for a
/// conventional DNS client (a legacy unicast reply, RFC 6762 §6.7) compresses names in record data only where
/// unicast DNS allows it (``RecordDataCompression/unicastDNS``).
///
/// Entries must be added section by section in order (questions, answers, authorities, additionals).
/// An entry that does not fit is refused and leaves the message unchanged, so callers can pack a message
/// full and carry the rest over to the next one.
public struct MessageWriter: Sendable {
    public private(set) var bytes: [UInt8]
    /// The largest message, in bytes of DNS payload, this writer will produce.
    public let limit: Int
    private var compression = CompressionTable()
    private var counts: [Int] = [0, 0, 0, 0]
    private var lastSection = 0
    /// Which names inside record data are compressed.
    public let recordDataCompression: RecordDataCompression

    /// Where names inside record data may be compressed.
    public enum RecordDataCompression: Sendable {
        /// Everywhere: PTR, CNAME, SRV and NSEC (RFC 6762 §18.14), for messages on port 5353.
        case multicastDNS
        /// Only in the record types of RFC 1035 (PTR, CNAME here): never in SRV (RFC 2782) or NSEC (RFC 4034
        /// §4.1.1, RFC 3597 §4), which strict unicast DNS clients refuse to decompress.
        case unicastDNS
    }

    /// The sections in the order their entries must be added.
    public enum Section: Int, Sendable {
        case answer = 1
        case authority = 2
        case additional = 3
    }

    /// Starts a message with the given header fields and an optional size limit in payload bytes.
    public init(
        id: UInt16 = 0, flags: DNSFlags = DNSFlags(), limit: Int = MessageSizeLimit.default.payloadLimit(ipv6: true),
        recordDataCompression: RecordDataCompression = .multicastDNS
    ) {
        self.limit = limit
        self.recordDataCompression = recordDataCompression
        bytes = [UInt8](repeating: 0, count: 12)
        bytes.reserveCapacity(512)
        bytes[0] = UInt8(id >> 8)
        bytes[1] = UInt8(id & 0xFF)
        bytes[2] = UInt8(flags.rawValue >> 8)
        bytes[3] = UInt8(flags.rawValue & 0xFF)
    }

    /// Number of questions added so far.
    public var questionCount: Int { counts[0] }
    /// Number of records added to a section so far.
    public func count(of section: Section) -> Int { counts[section.rawValue] }
    /// True when nothing but the header has been written.
    public var isEmpty: Bool { counts.allSatisfy { $0 == 0 } }

    /// Sets or clears the TC bit (more known answers follow, RFC 6762 §7.2).
    public mutating func setTruncated(_ truncated: Bool) {
        if truncated { bytes[2] |= 0x02 } else { bytes[2] &= ~0x02 }
    }

    /// Adds a question; returns false (and changes nothing) if it would not fit.
    @discardableResult
    public mutating func append(_ question: DNSQuestion) -> Bool {
        precondition(lastSection == 0, "questions must be added before any record")
        let mark = bytes.count
        writeName(question.name)
        writeU16(question.type.rawValue)
        writeU16(question.recordClass.rawValue & 0x7FFF | (question.unicastResponse ? 0x8000 : 0))
        return commit(mark: mark, section: 0)
    }

    /// Adds a record to a section; returns false (and changes nothing) if it would not fit.
    @discardableResult
    public mutating func append(_ record: ResourceRecord, to section: Section) -> Bool {
        precondition(section.rawValue >= lastSection, "records must be added section by section in order")
        let mark = bytes.count
        writeName(record.name)
        writeU16(record.type.rawValue)
        if record.type == .opt {
            writeU16(record.recordClass.rawValue)
        } else {
            writeU16(record.recordClass.rawValue & 0x7FFF | (record.cacheFlush ? 0x8000 : 0))
        }
        writeU32(record.ttl)
        let lengthOffset = bytes.count
        writeU16(0)
        writeData(record.data)
        let length = bytes.count - lengthOffset - 2
        if length > 0xFFFF {
            rollback(to: mark)
            return false
        }
        bytes[lengthOffset] = UInt8(length >> 8)
        bytes[lengthOffset + 1] = UInt8(length & 0xFF)
        return commit(mark: mark, section: section.rawValue)
    }

    /// The finished message bytes.
    public var message: [UInt8] { bytes }

    private mutating func commit(mark: Int, section: Int) -> Bool {
        guard bytes.count <= limit, counts[section] < 0xFFFF else {
            rollback(to: mark)
            return false
        }
        counts[section] += 1
        lastSection = section
        let countOffset = 4 + 2 * section
        bytes[countOffset] = UInt8(counts[section] >> 8)
        bytes[countOffset + 1] = UInt8(counts[section] & 0xFF)
        return true
    }

    private mutating func rollback(to mark: Int) {
        bytes.removeSubrange(mark...)
        compression.forget(offsetsFrom: mark)
    }

    private mutating func writeData(_ data: RecordData) {
        switch data {
        case .a(let address):
            writeU32(address.value)
        case .aaaa(let address):
            writeU32(UInt32(truncatingIfNeeded: address.high >> 32))
            writeU32(UInt32(truncatingIfNeeded: address.high))
            writeU32(UInt32(truncatingIfNeeded: address.low >> 32))
            writeU32(UInt32(truncatingIfNeeded: address.low))
        case .ptr(let name), .cname(let name):
            writeName(name)
        case .srv(let srv):
            writeU16(srv.priority)
            writeU16(srv.weight)
            writeU16(srv.port)
            writeName(srv.target, compressing: recordDataCompression == .multicastDNS)
        case .txt(let txt):
            bytes.append(contentsOf: txt.rdata)
        case .hinfo(let cpu, let os):
            bytes.append(UInt8(min(cpu.count, 255)))
            bytes.append(contentsOf: cpu.prefix(255))
            bytes.append(UInt8(min(os.count, 255)))
            bytes.append(contentsOf: os.prefix(255))
        case .nsec(let next, let types):
            writeName(next, compressing: recordDataCompression == .multicastDNS)
            bytes.append(contentsOf: types.encoded)
        case .opt(let raw), .opaque(let raw):
            bytes.append(contentsOf: raw)
        }
    }

    /// Writes a name, replacing its longest suffix already in the message by a pointer unless `compressing` is
    /// false (its labels can be pointed to by later names either way).
    private mutating func writeName(_ name: DNSName, compressing: Bool = true) {
        guard name.storage != nil else {
            bytes.append(0)
            return
        }
        name.withWire { wire in
            // Label start offsets within the name, and the hash of each suffix (computed from the right).
            var starts: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
            var hashes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
            var labelCount = 0
            var index = 0
            while index < wire.count {
                labelCount += 1
                index += 1 + Int(wire[index])
            }
            // Names of more than eight labels (reverse-mapping names) take the general path.
            if labelCount > 8 {
                var allStarts = [Int](repeating: 0, count: labelCount)
                var allHashes = [UInt64](repeating: 0, count: labelCount)
                allStarts.withUnsafeMutableBufferPointer { startBuffer in
                    allHashes.withUnsafeMutableBufferPointer { hashBuffer in
                        writeName(
                            wire, labelCount: labelCount, starts: startBuffer, hashes: hashBuffer,
                            compressing: compressing)
                    }
                }
                return
            }
            withUnsafeMutableBytes(of: &starts) { startBytes in
                withUnsafeMutableBytes(of: &hashes) { hashBytes in
                    writeName(
                        wire, labelCount: labelCount,
                        starts: UnsafeMutableBufferPointer(
                            start: startBytes.baseAddress!.assumingMemoryBound(to: Int.self), count: 8),
                        hashes: UnsafeMutableBufferPointer(
                            start: hashBytes.baseAddress!.assumingMemoryBound(to: UInt64.self), count: 8),
                        compressing: compressing)
                }
            }
        }
    }

    private mutating func writeName(
        _ wire: UnsafeBufferPointer<UInt8>, labelCount: Int,
        starts: UnsafeMutableBufferPointer<Int>, hashes: UnsafeMutableBufferPointer<UInt64>,
        compressing: Bool
    ) {
        var index = 0
        for label in 0..<labelCount {
            starts[label] = index
            index += 1 + Int(wire[index])
        }
        var running: UInt64 = 0xcbf2_9ce4_8422_2325
        for label in stride(from: labelCount - 1, through: 0, by: -1) {
            running = CompressionTable.extend(running, with: wire, label: starts[label])
            hashes[label] = running
        }
        // The longest suffix already present.
        var matchLabel = labelCount
        var matchOffset = -1
        for label in 0..<labelCount where compressing {
            if let offset = compression.lookup(hashes[label]), offset < bytes.count,
                suffixMatches(wire, from: starts[label], messageOffset: offset)
            {
                matchLabel = label
                matchOffset = offset
                break
            }
        }
        for label in 0..<matchLabel {
            let offset = bytes.count
            if offset <= CompressionTable.maxPointerTarget {
                compression.insert(hashes[label], offset: offset)
            }
            let start = starts[label]
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: wire[start..<(start + 1 + Int(wire[start]))]))
        }
        if matchOffset >= 0 {
            writeU16(0xC000 | UInt16(matchOffset))
        } else {
            bytes.append(0)
        }
    }

    /// True when the name written at `messageOffset` (following pointers) is exactly `wire[from...]`.
    private func suffixMatches(_ wire: UnsafeBufferPointer<UInt8>, from start: Int, messageOffset: Int) -> Bool {
        var position = messageOffset
        var index = start
        var hops = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte & 0xC0 == 0xC0 {
                hops += 1
                guard hops < 128, position + 1 < bytes.count else { return false }
                position = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                continue
            }
            if index == wire.count { return byte == 0 }
            guard byte == wire[index], byte != 0 else { return false }
            let length = Int(byte)
            guard position + 1 + length <= bytes.count else { return false }
            for offset in 1...length where bytes[position + offset] != wire[index + offset] { return false }
            position += 1 + length
            index += 1 + length
        }
        return false
    }

    private mutating func writeU16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    private mutating func writeU32(_ value: UInt32) {
        writeU16(UInt16(value >> 16))
        writeU16(UInt16(value & 0xFFFF))
    }
}

extension DNSMessage {
    /// The message in wire form, compressed, or an error if it is larger than `limit` payload bytes.
    public func serialized(limit: Int = Int(UInt16.max)) throws(DNSWireError) -> [UInt8] {
        var writer = MessageWriter(id: id, flags: flags, limit: limit)
        for question in questions where !writer.append(question) { throw tooLarge(limit: limit) }
        for record in answers where !writer.append(record, to: .answer) { throw tooLarge(limit: limit) }
        for record in authorities where !writer.append(record, to: .authority) { throw tooLarge(limit: limit) }
        for record in additionals where !writer.append(record, to: .additional) { throw tooLarge(limit: limit) }
        guard writer.message.count <= limit else { throw tooLarge(limit: limit) }  // even a bare header
        return writer.message
    }

    private func tooLarge(limit: Int) -> DNSWireError {
        var unlimited = MessageWriter(id: id, flags: flags, limit: Int.max)
        for question in questions { unlimited.append(question) }
        for record in answers { unlimited.append(record, to: .answer) }
        for record in authorities { unlimited.append(record, to: .authority) }
        for record in additionals { unlimited.append(record, to: .additional) }
        return DNSWireError(offset: limit, rule: .messageTooLarge(size: unlimited.bytes.count, limit: limit))
    }
}
