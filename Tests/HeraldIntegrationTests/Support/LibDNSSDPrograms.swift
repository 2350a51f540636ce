import Foundation

/// Herald's libdns_sd built from this checkout, and C programs compiled against Debian's dns_sd.h and linked
/// with `-ldns_sd` (Debian's library at link time), to be run with `LD_LIBRARY_PATH` pointing at Herald's.
enum LibDNSSDPrograms {
    /// Debian's header (package libavahi-compat-libdnssd-dev).
    static let debianInclude = "/usr/include/avahi-compat-libdns_sd"

    /// The repository this test file belongs to.
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        // Tests/HeraldIntegrationTests/Support/<this file>
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Where this process keeps the library and the compiled programs; removed when the test process exits.
    static let workDirectory: String = {
        atexit { try? FileManager.default.removeItem(atPath: "/tmp/herald-libdnssd-\(getpid())") }
        return "/tmp/herald-libdnssd-\(getpid())"
    }()

    /// The directory holding Herald's `libdns_sd.so.1`, built once per test process by Scripts/build-libdns_sd.sh.
    static func libraryDirectory() throws -> String {
        if let result = builtLibrary.value, let directory = try? result.get() { return directory }
        if case .failure(let error)? = builtLibrary.value { throw error }
        throw HarnessError.setup("libdns_sd was not built")
    }

    private static let builtLibrary = Once<Result<String, HarnessError>> {
        let directory = workDirectory + "/lib"
        do {
            let result = try Command.run(
                ["bash", repositoryRoot + "/Scripts/build-libdns_sd.sh", directory], timeout: 120)
            guard result.succeeded else {
                return .failure(.commandFailed(command: ["build-libdns_sd.sh"], result: result))
            }
            return .success(directory)
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(.setup("\(error)"))
        }
    }

    /// Compiles `source` (a path relative to the repository) against Debian's header, linked with `-ldns_sd`,
    /// and returns the executable's path.
    static func compile(_ source: String, named name: String) throws -> String {
        guard FileManager.default.fileExists(atPath: debianInclude + "/dns_sd.h") else {
            throw Requirements.Missing(items: [
                .init(what: "\(debianInclude)/dns_sd.h not found", package: "libavahi-compat-libdnssd-dev")
            ])
        }
        try FileManager.default.createDirectory(atPath: workDirectory + "/bin", withIntermediateDirectories: true)
        // Tests may compile the same program at once: each gets its own file.
        let output = workDirectory + "/bin/" + name + "-" + UUID().uuidString.prefix(8)
        try Command.check(
            [
                "cc", "-O1", "-Wall", "-Wextra", "-Werror", "-I" + debianInclude, repositoryRoot + "/" + source,
                "-o", output, "-ldns_sd",
            ], timeout: 120)
        return output
    }

    /// The environment that makes a program load Herald's library and talk to `socket`.
    static func environment(socket: String? = nil) throws -> [String: String] {
        var environment = ["LD_LIBRARY_PATH": try libraryDirectory()]
        if let socket { environment["DNSSD_UDS_PATH"] = socket }
        return environment
    }

    /// What `ldd` says `program` loads as libdns_sd.so.1: with Herald's library on the loader path, or (when
    /// `withHerald` is false) as it was linked.
    static func loadedLibrary(of program: String, withHerald: Bool = true) throws -> String? {
        let path = withHerald ? try libraryDirectory() : ""
        let result = try Command.run(["env", "LD_LIBRARY_PATH=\(path)", "ldd", program])
        return result.stdout.split(separator: "\n").first { $0.contains("libdns_sd.so.1") }
            .flatMap { $0.components(separatedBy: "=> ").last?.components(separatedBy: " (").first }
    }

    /// Every function the header declares (`<type> DNSSD_API Name(`), without the Apple-private block.
    static func declaredFunctions(inHeader text: String) -> Set<String> {
        var text = text
        // Comments may mention names; private declarations are not part of the API programs see.
        text = text.replacingOccurrences(of: #"/\*[\s\S]*?\*/"#, with: " ", options: .regularExpression)
        text = text.replacingOccurrences(of: #"//[^\n]*"#, with: " ", options: .regularExpression)
        text = text.replacingOccurrences(
            of: #"#ifdef __APPLE_API_PRIVATE[\s\S]*?#endif"#, with: " ", options: .regularExpression)
        let pattern = try! NSRegularExpression(pattern: #"DNSSD_API\s+(\w+)\s*\("#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(
            pattern.matches(in: text, range: range).compactMap { match in
                Range(match.range(at: 1), in: text).map { String(text[$0]) }
            })
    }
}
