extension DNSMessage {
    /// Parses a complete message. Every malformation is reported as a `DNSWireError`; no input traps or loops.
    public init(parsing bytes: [UInt8]) throws(DNSWireError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DNSWireError) in try DNSMessage(parsing: buffer) }
        }
        self = try result.get()
    }

    /// Parses a complete message from a slice.
    public init(parsing bytes: ArraySlice<UInt8>) throws(DNSWireError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DNSWireError) in try DNSMessage(parsing: buffer) }
        }
        self = try result.get()
    }

    /// Parses a complete message from raw memory (not retained).
    public init(parsing buffer: UnsafeRawBufferPointer) throws(DNSWireError) {
        var parser = MessageParser(buffer)
        self = try parser.parseMessage()
    }
}

/// Reads one message from memory. Names may be compressed anywhere, including inside PTR, CNAME, SRV and
/// NSEC record data, but each pointer must lead strictly backwards, which bounds the work by the message size.
struct MessageParser {
    private let bytes: UnsafeRawBufferPointer
    private let count: Int
    /// Names already read, by the offset they start at: a name that is only a pointer to one of them
    /// shares its storage instead of allocating a copy (most owner names in mDNS responses are).
    private var recentNames: [(offset: Int, name: DNSName)] = []
    private var recentNameNext = 0
    private static let recentNameCapacity = 16

    /// RFC 1035 §4.1.1.
    static let headerLength = 12
    /// Type, class, TTL and RDLENGTH after a record's name (RFC 1035 §4.1.3).
    static let recordFixedLength = 10

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.count = bytes.count
    }

    mutating func parseMessage() throws(DNSWireError) -> DNSMessage {
        guard count >= Self.headerLength else {
            throw DNSWireError(offset: 0, rule: .headerTruncated(length: count))
        }
        let id = u16(0)
        let flags = DNSFlags(rawValue: u16(2))
        let counts = (Int(u16(4)), Int(u16(6)), Int(u16(8)), Int(u16(10)))
        var position = Self.headerLength

        var questions: [DNSQuestion] = []
        questions.reserveCapacity(min(counts.0, (count - position) / 5))
        for index in 0..<counts.0 {
            guard position < count else {
                throw DNSWireError(offset: position, rule: .countExceedsData(section: .question, declared: counts.0, found: index))
            }
            let (name, afterName) = try readName(at: position)
            guard afterName + 4 <= count else { throw DNSWireError(offset: afterName, rule: .questionTruncated) }
            let rawClass = u16(afterName + 2)
            questions.append(DNSQuestion(
                name: name, type: RecordType(u16(afterName)), recordClass: RecordClass(rawClass & 0x7FFF),
                unicastResponse: rawClass & 0x8000 != 0))
            position = afterName + 4
        }
        let answers = try readRecords(counts.1, section: .answer, position: &position)
        let authorities = try readRecords(counts.2, section: .authority, position: &position)
        let additionals = try readRecords(counts.3, section: .additional, position: &position)
        return DNSMessage(id: id, flags: flags, questions: questions, answers: answers, authorities: authorities,
                          additionals: additionals)
    }

    private mutating func readRecords(_ declared: Int, section: DNSWireError.Section, position: inout Int) throws(DNSWireError)
        -> [ResourceRecord]
    {
        var records: [ResourceRecord] = []
        guard declared > 0 else { return records }
        // The smallest record is 11 bytes; never reserve more than the data could hold.
        records.reserveCapacity(min(declared, (count - position) / 11 + 1))
        for index in 0..<declared {
            guard position < count else {
                throw DNSWireError(offset: position, rule: .countExceedsData(section: section, declared: declared, found: index))
            }
            records.append(try readRecord(at: &position))
        }
        return records
    }

    private mutating func readRecord(at position: inout Int) throws(DNSWireError) -> ResourceRecord {
        let (name, afterName) = try readName(at: position)
        guard afterName + Self.recordFixedLength <= count else {
            throw DNSWireError(offset: afterName, rule: .recordTruncated)
        }
        let type = RecordType(u16(afterName))
        let rawClass = u16(afterName + 2)
        let ttl = u32(afterName + 4)
        let length = Int(u16(afterName + 8))
        let start = afterName + Self.recordFixedLength
        let end = start + length
        guard end <= count else {
            throw DNSWireError(offset: afterName + 8, rule: .rdataTruncated(type: type, declared: length, available: count - start))
        }
        let data = try readData(type: type, start: start, end: end)
        position = end
        if type == .opt {
            return ResourceRecord(name: name, type: type, recordClass: RecordClass(rawClass), cacheFlush: false, ttl: ttl, data: data)
        }
        return ResourceRecord(name: name, type: type, recordClass: RecordClass(rawClass & 0x7FFF),
                              cacheFlush: rawClass & 0x8000 != 0, ttl: ttl, data: data)
    }

    private mutating func readData(type: RecordType, start: Int, end: Int) throws(DNSWireError) -> RecordData {
        let length = end - start
        func mismatch(_ used: Int) -> DNSWireError {
            DNSWireError(offset: start - 2, rule: .rdataLengthMismatch(type: type, declared: length, used: used))
        }
        switch type {
        case .a:
            guard length == 4 else { throw mismatch(4) }
            return .a(IPv4Address(u32(start)))
        case .aaaa:
            guard length == 16 else { throw mismatch(16) }
            return .aaaa(IPv6Address(high: u64(start), low: u64(start + 8)))
        case .ptr, .cname:
            let (target, after) = try readName(at: start, limit: end)
            guard after == end else { throw mismatch(after - start) }
            return type == .ptr ? .ptr(target) : .cname(target)
        case .srv:
            guard length >= 7 else { throw mismatch(7) }
            let (target, after) = try readName(at: start + 6, limit: end)
            guard after == end else { throw mismatch(after - start) }
            return .srv(SRVData(priority: u16(start), weight: u16(start + 2), port: u16(start + 4), target: target))
        case .txt:
            var index = start
            while index < end {
                let stringEnd = index + 1 + Int(bytes[index])
                guard stringEnd <= end else { throw DNSWireError(offset: index, rule: .txtStringOverrun) }
                index = stringEnd
            }
            return .txt(TXTRecord(uncheckedRData: copy(start, end)))
        case .hinfo:
            guard length >= 1 else { throw mismatch(2) }
            let cpuEnd = start + 1 + Int(bytes[start])
            guard cpuEnd < end else { throw DNSWireError(offset: start, rule: .characterStringOverrun) }
            let osEnd = cpuEnd + 1 + Int(bytes[cpuEnd])
            guard osEnd <= end else { throw DNSWireError(offset: cpuEnd, rule: .characterStringOverrun) }
            guard osEnd == end else { throw mismatch(osEnd - start) }
            return .hinfo(cpu: copy(start + 1, cpuEnd), os: copy(cpuEnd + 1, osEnd))
        case .nsec:
            let (next, after) = try readName(at: start, limit: end)
            guard after <= end else { throw mismatch(after - start) }
            let bitmapBytes = copy(after, end)
            do {
                return .nsec(next: next, types: try TypeBitmap(encoded: bitmapBytes))
            } catch {
                throw DNSWireError(offset: after + error.offset, rule: .invalidTypeBitmap(reason: "\(error)"))
            }
        case .opt:
            return .opt(copy(start, end))
        default:
            return .opaque(copy(start, end))
        }
    }

    /// Reads a possibly compressed name starting at `start`. Returns the name and the position just after
    /// its inline part (after the first pointer, or after the root label). `limit` bounds the inline part
    /// (the end of the record data for names inside rdata).
    mutating func readName(at start: Int, limit: Int? = nil) throws(DNSWireError) -> (DNSName, Int) {
        // A name that is only a pointer to a name read before is that name.
        if start + 1 < (limit ?? count), bytes[start] & 0xC0 == 0xC0 {
            let target = Int(bytes[start] & 0x3F) << 8 | Int(bytes[start + 1])
            for entry in recentNames where entry.offset == target { return (entry.name, start + 2) }
        }
        let (name, end) = try decodeName(at: start, limit: limit)
        if recentNames.count < Self.recentNameCapacity {
            if recentNames.isEmpty { recentNames.reserveCapacity(Self.recentNameCapacity) }
            recentNames.append((start, name))
        } else {
            recentNames[recentNameNext] = (start, name)
            recentNameNext = (recentNameNext + 1) % Self.recentNameCapacity
        }
        return (name, end)
    }

    private func decodeName(at start: Int, limit: Int?) throws(DNSWireError) -> (DNSName, Int) {
        // First pass: validate and measure; second pass: copy into storage of the exact size.
        var position = start
        var runStart = start  // where the stretch being read began; pointers must lead before it
        var resume = -1
        var length = 0  // bytes of the name without the root label
        let inlineLimit = limit ?? count
        while true {
            let bound = resume < 0 ? inlineLimit : count
            guard position < bound else { throw DNSWireError(offset: position, rule: .nameTruncated) }
            let byte = bytes[position]
            if byte == 0 {
                if resume < 0 { resume = position + 1 }
                break
            }
            switch byte & 0xC0 {
            case 0x00:
                let labelEnd = position + 1 + Int(byte)
                guard labelEnd <= bound else { throw DNSWireError(offset: position, rule: .nameTruncated) }
                length += 1 + Int(byte)
                guard length < DNSName.maxWireLength else {
                    throw DNSWireError(offset: position, rule: .nameTooLong(length: length + 1))
                }
                position = labelEnd
            case 0xC0:
                guard position + 1 < bound else { throw DNSWireError(offset: position, rule: .nameTruncated) }
                let target = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < count else { throw DNSWireError(offset: position, rule: .pointerOutOfBounds(target: target)) }
                if target >= runStart {
                    if target <= position { throw DNSWireError(offset: position, rule: .pointerLoop(target: target)) }
                    throw DNSWireError(offset: position, rule: .forwardPointer(target: target))
                }
                if resume < 0 { resume = position + 2 }
                runStart = target
                position = target
            default:
                throw DNSWireError(offset: position, rule: .invalidLabelLength(byte: byte))
            }
        }
        if length == 0 { return (.root, resume) }
        let storage = NameStorage.make(count: length) { buffer in
            var from = start
            var to = 0
            while true {
                let byte = bytes[from]
                if byte == 0 { break }
                if byte & 0xC0 == 0xC0 {
                    from = Int(byte & 0x3F) << 8 | Int(bytes[from + 1])
                    continue
                }
                let labelLength = 1 + Int(byte)
                buffer.advanced(by: to).update(
                    from: bytes.baseAddress!.advanced(by: from).assumingMemoryBound(to: UInt8.self), count: labelLength)
                to += labelLength
                from += labelLength
            }
        }
        return (DNSName(storage: storage), resume)
    }

    @inline(__always) private func u16(_ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    @inline(__always) private func u32(_ offset: Int) -> UInt32 {
        UInt32(u16(offset)) << 16 | UInt32(u16(offset + 2))
    }

    @inline(__always) private func u64(_ offset: Int) -> UInt64 {
        UInt64(u32(offset)) << 32 | UInt64(u32(offset + 4))
    }

    private func copy(_ start: Int, _ end: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: end - start)
        result.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<end])) }
        return result
    }
}
