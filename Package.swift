// swift-tools-version: 6.1
import PackageDescription

// Layers, from the bottom up; every arrow points down this list.
//   HeraldFiles   files and directories through the C library, for every layer that reads them
//   HeraldWire    DNS messages, names, record data, DNS-SD naming: pure values, no I/O
//   HeraldEngine  the mDNS responder, querier and cache: a deterministic core on a virtual clock
//   HeraldBroker  the local-network permission model: manifests, identity, decisions, store
//   HeraldIPC     the dnssd client protocol spoken on the app socket: a pure codec
//   HeraldControl the operators' control protocol (JSON lines): a pure codec
//   HeraldSession the dnssd client sessions as a state machine, and the owners of engine operation IDs: no I/O
//   HeraldConfig  the readers of services.d files (Avahi .service, systemd .dnssd) and heraldd.conf: pure values, no I/O
//   HeraldNSS     the NSS socket's protocol (libnss-mdns's text lines) and the wait rules of a lookup: a pure codec
//   HeraldAvahi   Avahi's D-Bus API over a SessionCore: calls, objects, signals as values, no bus
//   HeraldDaemon  sockets, interfaces, the socket servers, configuration: the only OS-facing layer
//   HeraldClient  the synchronous client of the app socket
//   HeraldKit     the async client library for apps, on top of HeraldClient
//   heraldd, herald  the daemon and the command-line tool

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "heraldd", targets: ["heraldd"]),
        .executable(name: "herald", targets: ["herald"]),
        .executable(name: "tictactoe", targets: ["tictactoe"]),
        .library(name: "HeraldWire", targets: ["HeraldWire"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
        .library(name: "HeraldKit", targets: ["HeraldKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .target(name: "HeraldFiles"),
        .target(name: "HeraldWire"),
        // The system's SQLite, for the permission store.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "HeraldEngine",
            dependencies: [
                "HeraldWire",
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "HeraldBroker",
            dependencies: ["HeraldWire", "HeraldFiles", "CSQLite"],
            // Optimised in debug builds too: a pinned executable's SHA-256 is computed at 10 MB/s unoptimised, so
            // that a debug daemon under test would take seconds to recognise a pinned app of the test build's size.
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        .target(name: "HeraldIPC", dependencies: ["HeraldWire"]),
        .target(name: "HeraldControl"),
        .target(name: "HeraldConfig", dependencies: ["HeraldWire"]),
        .target(name: "HeraldNSS", dependencies: ["HeraldWire", "HeraldEngine"]),
        .target(name: "HeraldSession", dependencies: ["HeraldWire", "HeraldEngine", "HeraldIPC", "HeraldBroker"]),
        .target(name: "CHeraldSystem"),
        .target(name: "CHeralddEarly", dependencies: ["CHeraldSystem"]),
        .target(name: "CHeraldEarly", dependencies: ["CHeraldSystem"]),
        .target(
            name: "HeraldDaemon",
            dependencies: [
                "HeraldWire", "HeraldEngine", "HeraldBroker", "HeraldIPC", "HeraldControl", "HeraldSession",
                "HeraldFiles",
                "HeraldConfig", "HeraldNSS",
                "CHeraldSystem",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "HeraldClient", dependencies: ["HeraldWire", "HeraldIPC", "HeraldControl"]),
        .target(name: "HeraldKit", dependencies: ["HeraldClient", "HeraldIPC", "HeraldWire"]),
        .executableTarget(
            name: "heraldd",
            dependencies: [
                "HeraldDaemon", "CHeralddEarly",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldWire", "HeraldClient", "HeraldControl", "HeraldFiles", "CHeraldEarly", "CHeraldSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "tictactoe",
            dependencies: ["HeraldKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/TicTacToe",
            exclude: ["tictactoe.json", "README.md"]
        ),
        .executableTarget(name: "heraldkit-probe", dependencies: ["HeraldKit"], path: "Tests/HeraldKitProbe"),
        .executableTarget(
            name: "herald-engine-benchmark",
            dependencies: ["HeraldEngine", "HeraldWire"],
            path: "Benchmarks/EngineBenchmark"
        ),
        .executableTarget(
            name: "herald-enforcement-benchmark",
            dependencies: ["HeraldBroker", "HeraldWire", "CHeraldSystem"],
            path: "Benchmarks/EnforcementBenchmark"
        ),
        .executableTarget(
            name: "herald-wire-benchmark",
            dependencies: ["HeraldWire"],
            path: "Benchmarks/WireBenchmark"
        ),
        .testTarget(name: "HeraldFilesTests", dependencies: ["HeraldFiles"]),
        .testTarget(name: "HeraldIPCTests", dependencies: ["HeraldIPC"]),
        .testTarget(name: "HeraldBrokerTests", dependencies: ["HeraldBroker"]),
        .testTarget(name: "HeraldDaemonTests", dependencies: ["HeraldDaemon"]),
        .testTarget(name: "HeraldConfigTests", dependencies: ["HeraldConfig", "HeraldWire"]),
        .testTarget(name: "HeraldNSSTests", dependencies: ["HeraldNSS", "HeraldEngine", "HeraldWire"]),
        .testTarget(name: "HeraldEngineTests", dependencies: ["HeraldEngine", "HeraldWire"]),
        .testTarget(
            name: "HeraldWireTests",
            dependencies: ["HeraldWire"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "HeraldIntegrationTests", dependencies: [], exclude: ["CPrograms"]),
        .testTarget(name: "HeraldKitTests", dependencies: ["HeraldKit", "HeraldClient", "HeraldIPC"]),
        .testTarget(
            name: "HeraldSessionTests",
            dependencies: ["HeraldSession", "HeraldEngine", "HeraldWire", "HeraldIPC", "HeraldBroker"]),
    ]
)

// The XML reader that property-list manifests (HeraldBroker) and Avahi service files (HeraldConfig) are read with:
// libexpat, as Avahi and D-Bus use, with no DTDs, entities or processing instructions (Sources/HeraldXML).
package.targets += [
    .systemLibrary(name: "CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
    .target(name: "HeraldXML", dependencies: ["CExpat"]),
    .testTarget(name: "HeraldXMLTests", dependencies: ["HeraldXML"]),
]
for target in package.targets where target.name == "HeraldBroker" || target.name == "HeraldConfig" {
    target.dependencies.append("HeraldXML")
}

// Avahi's D-Bus API (docs/dbus-api.md): sd-bus from libsystemd for the bus, and the Avahi protocol over the
// sessions as a pure layer (HeraldAvahi) that HeraldDaemon's thin bus shell drives.
package.targets += [
    .systemLibrary(name: "CSystemdBus", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
    .target(name: "HeraldAvahi", dependencies: ["HeraldWire", "HeraldEngine", "HeraldIPC", "HeraldSession"]),
    .testTarget(
        name: "HeraldAvahiTests",
        dependencies: ["HeraldAvahi", "HeraldSession", "HeraldEngine", "HeraldIPC", "HeraldWire", "HeraldBroker"]),
]
for target in package.targets where target.name == "HeraldDaemon" {
    target.dependencies += ["HeraldAvahi", "CSystemdBus"]
}

// The libFuzzer targets (Fuzz/README.md), one executable per fuzzed module, each using the module's public API only.
// Fuzz/build.sh builds them with `-sanitize=fuzzer,address -DFUZZING`, and their main hands over to libFuzzer
// (Fuzz/Driver); an ordinary build compiles them without either, as programs that replay the input files they are given.
package.targets += [
    .target(name: "CFuzzDriver", path: "Fuzz/Driver"),
    .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"], path: "Fuzz/Support"),
    .executableTarget(name: "wire-fuzzer", dependencies: ["FuzzSupport", "HeraldWire"], path: "Fuzz/wire"),
    .executableTarget(name: "ipc-fuzzer", dependencies: ["FuzzSupport", "HeraldIPC", "HeraldWire"], path: "Fuzz/ipc"),
    .executableTarget(name: "control-fuzzer", dependencies: ["FuzzSupport", "HeraldControl"], path: "Fuzz/control"),
    .executableTarget(
        name: "manifest-fuzzer", dependencies: ["FuzzSupport", "HeraldBroker", "HeraldWire"], path: "Fuzz/manifest"),
    .executableTarget(
        name: "services-fuzzer", dependencies: ["FuzzSupport", "HeraldConfig", "HeraldWire"], path: "Fuzz/services"),
]

// Every Swift target sees only the members of modules it imports itself (SE-0444), so that a file's imports say
// what it uses and a dependency is never reached through another file's import.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
