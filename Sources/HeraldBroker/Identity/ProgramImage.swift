/// The program a process runs, as seen at one moment: the executable file (device and inode behind
/// `/proc/PID/exe`), when the process started, and where the kernel laid out its code and stack. The layout is
/// drawn at random anew by every `execve` (address space layout randomisation), so two images of one process that
/// differ tell that it has exec'd since: another program, or the same one again with other settings.
package struct ProgramImage: Hashable, Sendable, CustomStringConvertible {
    /// The executable file's device and inode.
    package var device: UInt64
    package var inode: UInt64
    /// When the process started, in clock ticks after boot (`/proc/PID/stat` field 22); an exec keeps it.
    package var startTime: UInt64
    /// Where the code and the stack begin (fields 26 and 28); zero where the reader may not see them.
    package var codeStart: UInt64
    package var stackStart: UInt64

    package init(device: UInt64, inode: UInt64, startTime: UInt64, codeStart: UInt64 = 0, stackStart: UInt64 = 0) {
        self.device = device
        self.inode = inode
        self.startTime = startTime
        self.codeStart = codeStart
        self.stackStart = stackStart
    }

    /// True when `later`, read from the same process, shows it still runs the program this image saw.
    package func isSameProgram(as later: ProgramImage) -> Bool {
        self == later
    }

    package var description: String {
        "file \(device):\(inode), started at tick \(startTime)"
    }

    /// The start time and layout fields of the text of `/proc/PID/stat`. The command name (field 2) is in
    /// parentheses and may hold spaces and parentheses itself, so the fields are counted after the last `)`.
    package static func parseStat(_ text: String) -> (startTime: UInt64, codeStart: UInt64, stackStart: UInt64)? {
        guard let fields = statFields(text), fields.count >= 26, let startTime = UInt64(fields[22 - 3]),
            let codeStart = UInt64(fields[26 - 3]), let stackStart = UInt64(fields[28 - 3])
        else { return nil }
        return (startTime, codeStart, stackStart)
    }

    /// Where the start environment lies in the process's memory (fields 50 and 51, Linux 3.5 and later); nil where
    /// the reader may not see it (the fields read zero) or the kernel does not give it.
    package static func parseEnvironmentRange(_ text: String) -> Range<UInt64>? {
        guard let fields = statFields(text), fields.count >= 51 - 2, let start = UInt64(fields[50 - 3]),
            let end = UInt64(fields[51 - 3]), start > 0, end > start
        else { return nil }
        return start..<end
    }

    /// The fields of `/proc/PID/stat` after the command name (field 2, in parentheses, which may hold spaces and
    /// parentheses itself, so they are counted after the last `)`): field N is at index N - 3.
    private static func statFields(_ text: String) -> [Substring]? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
    }
}

/// Settings in a process's start environment that make the dynamic loader run other code than the program's and
/// its libraries' (ld.so(8)). A program started with `LD_PRELOAD` or `LD_AUDIT` is not that program as far as a
/// manifest is concerned; one started with `LD_LIBRARY_PATH` (which is how a program finds a drop-in library such as
/// Herald's `libdns_sd`) still is, except where the manifest pins the program's content.
package enum LoaderOverride {
    /// The variables that load extra code into every process started with them.
    package static let injecting = ["LD_PRELOAD", "LD_AUDIT"]
    /// The variable that takes libraries from elsewhere.
    package static let libraryPath = "LD_LIBRARY_PATH"

    /// What `environment`, the NUL-separated text of `/proc/PID/environ`, asks of the loader: the first injecting
    /// variable set to a non-empty value (nil when none is), and whether a library path is set.
    package static func found(inEnvironment environment: [UInt8]) -> (injecting: String?, libraryPath: Bool) {
        var injecting: String?
        var libraryPath = false
        for entry in environment.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")), equals + 1 < entry.endIndex else { continue }
            let name = String(decoding: entry[entry.startIndex..<equals], as: UTF8.self)
            if injecting == nil, Self.injecting.contains(name) { injecting = name }
            if name == Self.libraryPath { libraryPath = true }
        }
        return (injecting, libraryPath)
    }
}
