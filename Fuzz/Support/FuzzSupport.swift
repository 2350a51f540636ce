// Helpers shared by the libFuzzer targets other than the wire target. Fuzz/build.sh compiles this file into
// each of them (into the module under test, next to the target's own file).

#if canImport(Glibc)
import Glibc
#endif

enum FuzzSupport {
    /// Writes `seeds` as files into the directory named by the environment variable `FUZZ_WRITE_SEEDS`, when it
    /// is set (Fuzz/run.sh sets it for one `-runs=0` start before fuzzing). Seeds built with the module's own
    /// encoders are well-formed by construction, so the fuzzer starts from valid messages.
    static func writeSeedsIfAsked(_ seeds: () -> [(name: String, bytes: [UInt8])]) {
        guard let directory = getenv("FUZZ_WRITE_SEEDS").map({ String(cString: $0) }), !directory.isEmpty else {
            return
        }
        for seed in seeds() {
            let path = directory + "/seed-" + seed.name
            guard let file = fopen(path, "wb") else { continue }
            _ = seed.bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
        }
    }

    /// Splits `input` into pieces whose sizes come from `sizes` (cycled; a size of 0 counts as 1), so a stream
    /// decoder can be fed the same bytes in arbitrary reads.
    static func chunks(_ input: [UInt8], sizes: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var index = 0
        var turn = 0
        while index < input.count {
            let size = sizes.isEmpty ? input.count : max(1, Int(sizes[turn % sizes.count]))
            let end = min(input.count, index + size)
            pieces.append(input[index..<end])
            index = end
            turn += 1
        }
        return pieces
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
}
