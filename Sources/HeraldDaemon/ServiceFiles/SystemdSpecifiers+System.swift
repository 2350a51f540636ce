import HeraldConfig
import HeraldFiles

extension SystemdDNSSDFile.Specifiers {
    /// The values of this machine (machine ID, boot ID, kernel release, architecture and os-release read from
    /// the system where available).
    package static func system(hostName: String) -> Self {
        func firstLine(_ path: String) -> String? {
            guard let text = FileContents.text(path) else { return nil }
            let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: true).first
                .map { String($0).trimmingWhitespace() }
            return line?.isEmpty == false ? line : nil
        }
        #if arch(x86_64)
            let architecture: String? = "x86-64"
        #elseif arch(arm64)
            let architecture: String? = "arm64"
        #elseif arch(i386)
            let architecture: String? = "x86"
        #else
            let architecture: String? = nil
        #endif
        // os-release(5): /etc/os-release, or /usr/lib/os-release when the first is missing.
        let osRelease =
            ["/etc/os-release", "/usr/lib/os-release"].lazy
            .compactMap { try? FileContents.read($0).get() }.first
            .map { parseOSRelease(String(decoding: $0, as: UTF8.self)) } ?? [:]
        return Self(
            hostName: hostName,
            machineID: firstLine("/etc/machine-id"),
            bootID: firstLine("/proc/sys/kernel/random/boot_id").map { $0.filter { $0 != "-" } },
            kernelRelease: firstLine("/proc/sys/kernel/osrelease"),
            architecture: architecture,
            osRelease: osRelease)
    }
}
