// swift-tools-version: 6.1
import PackageDescription

// Layers, from the bottom up; every arrow points down this list.
//   HeraldWire    DNS messages, names, record data, DNS-SD naming: pure values, no I/O
//   HeraldEngine  the mDNS responder, querier and cache: a deterministic core on a virtual clock
//   HeraldBroker  the local-network permission model: manifests, identity, decisions, store
//   HeraldIPC     the dnssd client protocol spoken on the app socket: a pure codec
//   HeraldDaemon  sockets, interfaces, the socket servers, configuration: the only OS-facing layer
//   HeraldClient  the Swift client library for apps
//   heraldd, herald  the daemon and the command-line tool
let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "heraldd", targets: ["heraldd"]),
        .executable(name: "herald", targets: ["herald"]),
        .library(name: "HeraldWire", targets: ["HeraldWire"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(name: "HeraldWire"),
        .target(
            name: "HeraldEngine",
            dependencies: [
                "HeraldWire",
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "HeraldBroker",
            dependencies: ["HeraldWire", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(name: "HeraldIPC", dependencies: ["HeraldWire"]),
        .target(name: "CHeraldSystem"),
        .target(
            name: "HeraldDaemon",
            dependencies: [
                "HeraldWire", "HeraldEngine", "HeraldBroker", "HeraldIPC", "CHeraldSystem",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "HeraldClient", dependencies: ["HeraldWire", "HeraldIPC"]),
        .executableTarget(
            name: "heraldd",
            dependencies: [
                "HeraldDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldWire", "HeraldClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
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
    ]
)
