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
        .target(name: "HeraldSession", dependencies: ["HeraldWire", "HeraldEngine", "HeraldIPC", "HeraldBroker"]),
        .target(name: "CHeraldSystem"),
        .target(name: "CHeralddEarly", dependencies: ["CHeraldSystem"]),
        .target(
            name: "HeraldDaemon",
            dependencies: [
                "HeraldWire", "HeraldEngine", "HeraldBroker", "HeraldIPC", "HeraldControl", "HeraldSession", "HeraldFiles",
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
                "HeraldWire", "HeraldClient", "HeraldControl", "HeraldFiles",
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
            name: "herald-wire-benchmark",
            dependencies: ["HeraldWire"],
            path: "Benchmarks/WireBenchmark"
        ),
        .testTarget(name: "HeraldFilesTests", dependencies: ["HeraldFiles"]),
        .testTarget(name: "HeraldIPCTests", dependencies: ["HeraldIPC"]),
        .testTarget(name: "HeraldBrokerTests", dependencies: ["HeraldBroker"]),
        .testTarget(name: "HeraldDaemonTests", dependencies: ["HeraldDaemon"]),
        .testTarget(name: "HeraldEngineTests", dependencies: ["HeraldEngine", "HeraldWire"]),
        .testTarget(
            name: "HeraldWireTests",
            dependencies: ["HeraldWire"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "HeraldIntegrationTests", dependencies: [], exclude: ["CPrograms"]),
        .testTarget(name: "HeraldKitTests", dependencies: ["HeraldKit", "HeraldIPC"]),
        .testTarget(name: "HeraldSessionTests", dependencies: ["HeraldSession", "HeraldEngine", "HeraldWire", "HeraldIPC", "HeraldBroker"]),
    ]
)

// The XML reader that property-list manifests (HeraldBroker) and Avahi service files (HeraldDaemon) are read with:
// libexpat, as Avahi and D-Bus use, with no DTDs, entities or processing instructions (Sources/HeraldXML).
package.targets += [
    .systemLibrary(name: "CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
    .target(name: "HeraldXML", dependencies: ["CExpat"]),
    .testTarget(name: "HeraldXMLTests", dependencies: ["HeraldXML"]),
]
for target in package.targets where target.name == "HeraldBroker" || target.name == "HeraldDaemon" {
    target.dependencies.append("HeraldXML")
}
