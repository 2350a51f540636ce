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
        // The table of names already read lives on the stack.
        let result = withUnsafeTemporaryAllocation(
            of: MessageParser.RecentName.self, capacity: MessageParser.recentNameCapacity
        ) { recent in
            var parser = MessageParser(buffer, recent: recent.baseAddress!)
            return Result { () throws(DNSWireError) in try parser.parseMessage() }
        }
        self = try result.get()
    }
}

/// Reads one message from memory. Names may be compressed anywhere, including inside PTR, CNAME, SRV and
/// NSEC record data, but each pointer must lead strictly backwards, which bounds the work by the message size.
struct MessageParser {
    private let bytes: UnsafeRawBufferPointer
    private let count: Int
    /// The block that decoded names are written into, shared by the names of this message, and how
    /// much of it is used.
    private var arena: NameStorage?
    private var arenaBase: UnsafeMutablePointer<UInt8>?
    private var arenaUsed = 0
    private var arenaCapacity = 0
    /// Names already read, by the offset they start at: a name that is only a pointer to one of them
    /// shares its storage instead of allocating a copy (about half of all names in mDNS responses).
    private let recent: UnsafeMutablePointer<RecentName>
    private var recentCount = 0
    private var recentNext = 0
    static let recentNameCapacity = 16

    /// A name read at `offset`. The block is not retained: every name in this table was also handed to
    /// the message being built, which keeps its block alive until parsing ends, and the table is thrown
    /// away then.
    struct RecentName {
        var offset: Int
        var start: UInt32
        var length: UInt32
        var storage: Unmanaged<NameStorage>
    }

    /// RFC 1035 §4.1.1.
    static let headerLength = 12
    /// Type, class, TTL and RDLENGTH after a record's name (RFC 1035 §4.1.3).
    static let recordFixedLength = 10

    init(_ bytes: UnsafeRawBufferPointer, recent: UnsafeMutablePointer<RecentName>) {
        self.bytes = bytes
        self.count = bytes.count
        self.recent = recent
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
                throw DNSWireError(
                    offset: position, rule: .countExceedsData(section: .question, declared: counts.0, found: index))
            }
            let (name, afterName) = try readName(at: position)
            guard afterName + 4 <= count else { throw DNSWireError(offset: afterName, rule: .questionTruncated) }
            let rawClass = u16(afterName + 2)
            questions.append(
                DNSQuestion(
                    name: name, type: RecordType(u16(afterName)), recordClass: RecordClass(rawClass & 0x7FFF),
                    unicastResponse: rawClass & 0x8000 != 0))
            position = afterName + 4
        }
        let answers = try readRecords(counts.1, section: .answer, position: &position)
        let authorities = try readRecords(counts.2, section: .authority, position: &position)
        let additionals = try readRecords(counts.3, section: .additional, position: &position)
        return DNSMessage(
            id: id, flags: flags, questions: questions, answers: answers, authorities: authorities,
            additionals: additionals)
    }

    private mutating func readRecords(_ declared: Int, section: DNSWireError.Section, position: inout Int)
        throws(DNSWireError)
        -> [ResourceRecord]
    {
        var records: [ResourceRecord] = []
        guard declared > 0 else { return records }
        // The smallest record is 11 bytes; never reserve more than the data could hold.
        records.reserveCapacity(min(declared, (count - position) / 11 + 1))
        for index in 0..<declared {
            guard position < count else {
                throw DNSWireError(
                    offset: position, rule: .countExceedsData(section: section, declared: declared, found: index))
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
            throw DNSWireError(
                offset: afterName + 8, rule: .rdataTruncated(type: type, declared: length, available: count - start))
        }
        let data = try readData(type: type, start: start, end: end)
        position = end
        if type == .opt {
            // OPT's TTL field holds the extended RCODE, version and flags (RFC 6891 §6.1.3), not a time.
            return ResourceRecord(
                name: name, type: type, recordClass: RecordClass(rawClass), cacheFlush: false, ttl: ttl, data: data)
        }
        // RFC 2181 §8: a TTL with its top bit set is read as zero; at most 2³¹−1 seconds (68 years) is kept.
        return ResourceRecord(
            name: name, type: type, recordClass: RecordClass(rawClass & 0x7FFF),
            cacheFlush: rawClass & 0x8000 != 0, ttl: ttl & 0x8000_0000 == 0 ? ttl : 0, data: data)
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
        case .ns, .mx, .soa:
            // RFC 1035 types whose names may be compressed (RFC 3597 §4): kept as opaque data, but with the
            // names written out, so the bytes stay valid outside this message.
            return .opaque(try decompressedData(type: type, start: start, end: end))
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
            for index in 0..<recentCount where recent[index].offset == target {
                let entry = recent[index]
                let name = DNSName(
                    storage: entry.storage.takeUnretainedValue(), start: Int(entry.start),
                    length: Int(entry.length))
                return (name, start + 2)
            }
        }
        let (name, end) = try decodeName(at: start, limit: limit)
        guard let storage = name.storage else { return (name, end) }
        let entry = RecentName(
            offset: start, start: name.start, length: name.length,
            storage: Unmanaged.passUnretained(storage))
        if recentCount < Self.recentNameCapacity {
            (recent + recentCount).initialize(to: entry)
            recentCount += 1
        } else {
            recent[recentNext] = entry
            recentNext = (recentNext + 1) % Self.recentNameCapacity
        }
        return (name, end)
    }

    /// Reads a possibly compressed name starting at `start`. Returns the name and the position just after
    /// its inline part (after the first pointer, or after the root label). `limit` bounds the inline part
    /// (the end of the record data for names inside rdata).
    private mutating func decodeName(at start: Int, limit: Int?) throws(DNSWireError) -> (DNSName, Int) {
        var position = start
        var runStart = start  // where the stretch being read began; pointers must lead before it
        var resume = -1
        var length = 0  // bytes of the name without the root label
        let inlineLimit = limit ?? count
        let source = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if arenaCapacity - arenaUsed < DNSName.maxWireLength { startArena() }
        let scratch = arenaBase! + arenaUsed
        while true {
            let bound = resume < 0 ? inlineLimit : count
            guard position < bound else { throw DNSWireError(offset: position, rule: .nameTruncated) }
            let byte = source[position]
            if byte == 0 {
                if resume < 0 { resume = position + 1 }
                break
            }
            switch byte & 0xC0 {
            case 0x00:
                let labelEnd = position + 1 + Int(byte)
                guard labelEnd <= bound else { throw DNSWireError(offset: position, rule: .nameTruncated) }
                guard length + 1 + Int(byte) < DNSName.maxWireLength else {
                    throw DNSWireError(offset: position, rule: .nameTooLong(length: length + Int(byte) + 2))
                }
                // Labels are short: a byte loop beats a call to memmove.
                for index in position..<labelEnd {
                    scratch[length] = source[index]
                    length += 1
                }
                position = labelEnd
            case 0xC0:
                guard position + 1 < bound else { throw DNSWireError(offset: position, rule: .nameTruncated) }
                let target = Int(byte & 0x3F) << 8 | Int(source[position + 1])
                guard target < count else {
                    throw DNSWireError(offset: position, rule: .pointerOutOfBounds(target: target))
                }
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
        let name = DNSName(storage: arena, start: arenaUsed, length: length)
        arenaUsed += length
        return (name, resume)
    }

    /// Makes a new block for the names still to be read. Its size is a guess from the message size that
    /// usually holds every name; when it fills, another is started.
    private mutating func startArena() {
        let capacity = max(4 * DNSName.maxWireLength, 2 * count)
        let block = NameStorage.make(capacity: capacity)
        arena = block
        arenaBase = block.withUnsafeMutablePointerToElements { $0 }
        arenaUsed = 0
        arenaCapacity = capacity
    }

    /// The data of an NS, MX or SOA record with its names decompressed.
    private mutating func decompressedData(type: RecordType, start: Int, end: Int) throws(DNSWireError) -> [UInt8] {
        func mismatch(_ used: Int) -> DNSWireError {
            DNSWireError(offset: start - 2, rule: .rdataLengthMismatch(type: type, declared: end - start, used: used))
        }
        var result: [UInt8] = []
        var position = start
        if type == .mx {
            guard end - start >= 3 else { throw mismatch(3) }
            result += copy(start, start + 2)
            position += 2
        }
        let nameCount = type == .soa ? 2 : 1
        for _ in 0..<nameCount {
            let (name, after) = try readName(at: position, limit: end)
            result += name.wire + [0]
            position = after
        }
        if type == .soa {
            guard end - position == 20 else { throw mismatch(position - start + 20) }
            result += copy(position, end)
            position = end
        }
        guard position == end else { throw mismatch(position - start) }
        return result
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
