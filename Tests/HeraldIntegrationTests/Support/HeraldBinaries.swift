import Foundation

/// The `heraldd` and `herald` executables under test: those built next to the test bundle (SwiftPM puts
/// products and the test bundle in one directory), or those in `HERALD_BIN_DIR` when it is set.
enum HeraldBinaries {
    /// The directory holding both executables; throws saying how to build them when one is missing.
    static func directory() throws -> String {
        if let value = cached.value, let directory = value { return directory }
        throw HarnessError.setup(
            """
            heraldd and herald were not found next to the test bundle (\(bundleDirectory)); build them first \
            (swift build --build-tests, which swift test does too) or set HERALD_BIN_DIR to their directory
            """)
    }

    static func heraldd() throws -> String { try directory() + "/heraldd" }
    static func herald() throws -> String { try directory() + "/herald" }

    /// Where the running test executable lives (`.build/debug` for `swift test`).
    static var bundleDirectory: String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = (executable as NSString).deletingLastPathComponent
        // On Darwin-style bundles the binary sits in X.xctest/Contents/MacOS.
        while directory.contains(".xctest") { directory = (directory as NSString).deletingLastPathComponent }
        return directory
    }

    private static let cached = Once<String?> {
        var candidates: [String] = []
        if let forced = ProcessInfo.processInfo.environment["HERALD_BIN_DIR"], !forced.isEmpty {
            candidates.append(forced)
        }
        candidates.append(bundleDirectory)
        return candidates.first { directory in
            ["heraldd", "herald"].allSatisfy { access(directory + "/" + $0, X_OK) == 0 }
        }
    }
}
