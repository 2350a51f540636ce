// Helpers shared by the libFuzzer targets (Fuzz/README.md): the entry point of each target's executable, and what
// several targets need.

import CFuzzDriver

#if canImport(Glibc)
    import Glibc
#endif

public enum FuzzSupport {
    /// A fuzz target's `main`. Built by Fuzz/build.sh (with `-DFUZZING`, linked with libFuzzer), it hands the process to
    /// libFuzzer, which calls the target's `LLVMFuzzerTestOneInput`; built without, it replays the files named on the
    /// command line through `run`.
    public static func main(_ run: ([UInt8]) -> Void) -> Never {
        #if FUZZING
            let status = herald_fuzz_run_driver(CommandLine.argc, CommandLine.unsafeArgv)
            guard status >= 0 else {
                printError("built with -DFUZZING but without libFuzzer (-sanitize=fuzzer)")
                exit(2)
            }
            exit(status)
        #else
            replay(run)
        #endif
    }

    /// The executable's work when it is built without libFuzzer (no `-DFUZZING`): runs `run` on the bytes of each
    /// file named on the command line, in order, so that a crash, timeout or corpus input can be replayed under a
    /// debugger or an ordinary build. A failed invariant traps as it does under libFuzzer.
    public static func replay(_ run: ([UInt8]) -> Void) -> Never {
        let paths = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("-") }
        guard !paths.isEmpty else {
            printError(
                "usage: \(CommandLine.arguments[0]) FILE...   (replays inputs; build with Fuzz/build.sh to fuzz)")
            exit(2)
        }
        for path in paths {
            guard let bytes = read(path) else {
                printError("cannot read \(path)")
                exit(1)
            }
            run(bytes)
        }
        print("replayed \(paths.count) input(s): no invariant broken")
        exit(0)
    }

    private static func printError(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    private static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes += buffer[..<count]
            if count < buffer.count { return ferror(file) == 0 ? bytes : nil }
        }
    }

    /// Writes `seeds` as files into the directory named by the environment variable `FUZZ_WRITE_SEEDS`, when it
    /// is set (Fuzz/run.sh sets it for one `-runs=0` start before fuzzing). Seeds built with the module's own
    /// encoders are well-formed by construction, so the fuzzer starts from valid messages.
    public static func writeSeedsIfAsked(_ seeds: () -> [(name: String, bytes: [UInt8])]) {
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
    public static func chunks(_ input: [UInt8], sizes: [UInt8]) -> [ArraySlice<UInt8>] {
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

    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    /// Text escaped for XML character data, for the targets that write documents for the XML reader; nil when it
    /// holds a character XML 1.0 cannot carry, or a carriage return (which XML turns into a line feed).
    public static func escapeXML(_ text: String) -> String? {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x26: out += "&amp;"
            case 0x3C: out += "&lt;"
            case 0x3E: out += "&gt;"
            case 0x09, 0x0A: out.unicodeScalars.append(scalar)
            case 0x0D, 0x00...0x1F, 0xFFFE, 0xFFFF: return nil
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
