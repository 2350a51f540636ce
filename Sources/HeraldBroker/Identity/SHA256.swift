/// SHA-256 (FIPS 180-4), for pinning an app's executable in its manifest (`executableSHA256`).
///
/// Streaming: feed bytes with ``update(_:)`` in pieces of any size, then read ``finalize()``.
package struct SHA256: Sendable {
    /// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    /// FIPS 180-4 §5.3.3: the initial hash value.
    private static let initialState: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    /// The block size in bytes.
    private static let blockSize = 64

    private var state = SHA256.initialState
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    package init() {}

    /// The digest of `bytes` in one call.
    package static func hash<Bytes: Sequence>(_ bytes: Bytes) -> SHA256Digest where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Adds bytes to the message.
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        update(Array(bytes))
    }

    /// Adds bytes to the message; whole blocks are compressed straight from `bytes`.
    package mutating func update(_ bytes: [UInt8]) {
        length &+= UInt64(bytes.count)
        var index = 0
        if !buffer.isEmpty {
            let take = min(Self.blockSize - buffer.count, bytes.count)
            buffer += bytes[0..<take]
            index = take
            if buffer.count == Self.blockSize {
                compress(buffer[...])
                buffer.removeAll(keepingCapacity: true)
            }
        }
        let wholeBlocks = (bytes.count - index) / Self.blockSize
        if wholeBlocks > 0 {
            bytes.withUnsafeBufferPointer { compress($0.baseAddress! + index, blocks: wholeBlocks) }
            index += wholeBlocks * Self.blockSize
        }
        buffer += bytes[index...]
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns the digest.
    package func finalize() -> SHA256Digest {
        var copy = self
        let bitLength = length &* 8
        copy.buffer.append(0x80)
        if copy.buffer.count > Self.blockSize - 8 {
            copy.buffer += [UInt8](repeating: 0, count: Self.blockSize - copy.buffer.count)
            copy.compress(copy.buffer[...])
            copy.buffer.removeAll(keepingCapacity: true)
        }
        copy.buffer += [UInt8](repeating: 0, count: Self.blockSize - 8 - copy.buffer.count)
        for shift in stride(from: 56, through: 0, by: -8) {
            copy.buffer.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        copy.compress(copy.buffer[...])
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for word in copy.state {
            bytes += [
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ]
        }
        return SHA256Digest(bytes: bytes)
    }

    /// FIPS 180-4 §6.2.2: one block of the compression function.
    private mutating func compress(_ block: ArraySlice<UInt8>) {
        block.withUnsafeBufferPointer { compress($0.baseAddress!, blocks: 1) }
    }

    /// FIPS 180-4 §6.2.2 over `blocks` consecutive 64-byte blocks. Written on raw pointers, with the rotations spelled
    /// out, so that even an unoptimised build hashes an app's executable in a fraction of a second.
    private mutating func compress(_ data: UnsafePointer<UInt8>, blocks: Int) {
        var h0 = state[0]
        var h1 = state[1]
        var h2 = state[2]
        var h3 = state[3]
        var h4 = state[4]
        var h5 = state[5]
        var h6 = state[6]
        var h7 = state[7]
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            Self.roundConstants.withUnsafeBufferPointer { constants in
                let w = schedule.baseAddress!
                let k = constants.baseAddress!
                // `while` rather than `for in`: without optimisation, each step of a range's iterator is a call.
                var p = data
                let end = data + blocks * Self.blockSize
                while p < end {
                    var t = 0
                    while t < 16 {
                        w[t] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
                        p += 4
                        t += 1
                    }
                    while t < 64 {
                        let x = w[t - 15]
                        let y = w[t - 2]
                        let s0 = (x >> 7 | x << 25) ^ (x >> 18 | x << 14) ^ (x >> 3)
                        let s1 = (y >> 17 | y << 15) ^ (y >> 19 | y << 13) ^ (y >> 10)
                        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                        t += 1
                    }
                    var a = h0
                    var b = h1
                    var c = h2
                    var d = h3
                    var e = h4
                    var f = h5
                    var g = h6
                    var h = h7
                    t = 0
                    while t < 64 {
                        let s1 = (e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ ch &+ k[t] &+ w[t]
                        let s0 = (a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ s0 &+ maj
                        t += 1
                    }
                    h0 &+= a
                    h1 &+= b
                    h2 &+= c
                    h3 &+= d
                    h4 &+= e
                    h5 &+= f
                    h6 &+= g
                    h7 &+= h
                }
            }
        }
        state = [h0, h1, h2, h3, h4, h5, h6, h7]
    }
}

/// A SHA-256 digest, written as 64 lowercase hexadecimal digits.
package struct SHA256Digest: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    package let bytes: [UInt8]

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses 64 hexadecimal digits, in either case; nil for anything else.
    package init?(hex text: String) {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// The 64 lowercase hexadecimal digits.
    package var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: out, as: UTF8.self)
    }

    package var description: String { hex }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
