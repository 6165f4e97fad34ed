// swift-tools-version: 6.1
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode, and the upcoming features that keep C types
/// out of public signatures (`InternalImportsByDefault`) and imports explicit. No unsafe flags: a
/// package depending on this one would be refused. The release tuning is scripts/build-release.sh's.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The dependencies only the server, the tools and their tests use. A package that wants the SDK alone
/// depends on this one with `traits: []`: SwiftPM then does not fetch them (README, "The Swift SDK").
let serverOnly = TargetDependencyCondition.when(traits: ["Server"])

let package = Package(
    name: "HomeRPC",
    products: [
        .executable(name: "homed", targets: ["homed"]),
        .executable(name: "loadgen", targets: ["LoadGen"]),
        .executable(name: "rpc-client", targets: ["rpc-client"]),
        .library(name: "Wire", targets: ["Wire"]),
        .library(name: "UV", targets: ["UV"]),
        .library(name: "TLS", targets: ["TLS"]),
        .library(name: "RPCServer", targets: ["RPCServer"]),
        .library(name: "RPCClient", targets: ["RPCClient"]),
        .library(name: "HomeProto", targets: ["HomeProto"]),
        .library(name: "HomeService", targets: ["HomeService"]),
        .library(name: "HomeAPI", targets: ["HomeAPI"]),
        .library(name: "HomeClient", targets: ["HomeClient"]),
        // The decoder's invariant checks, for the fuzzer in fuzz/.
        .library(name: "WireTesting", targets: ["WireTesting"]),
    ],
    traits: [
        .trait(
            name: "Server",
            description:
                "The server, the CLI, the load generator and the tests (swift-crypto, ArgumentParser, HdrHistogram)"
        ),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // System libraries: a module map and a shim header each, nothing else.
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .systemLibrary(
            name: "CLibSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // The only Swift that touches libuv.
        .target(name: "UV", dependencies: ["CLibUV"], swiftSettings: strictSettings),
        // The only Swift that touches OpenSSL: TLS contexts and sessions whose records pass through
        // memory, for UV's connections to put between their socket and their delegate.
        .target(name: "TLS", dependencies: ["CLibSSL", "UV"], swiftSettings: strictSettings),
        // The only Swift that touches nghttp2: an HTTP/2 server session that does no I/O of its own.
        .target(name: "HTTP2", dependencies: ["CNGHTTP2"], swiftSettings: strictSettings),
        // The only Swift that touches sqlite3: connections, statements, transactions, result codes.
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: strictSettings),
        // The home domain: model, HomeKit rules and error codes, the store and its persistence.
        .target(
            name: "HomeService",
            dependencies: ["SQLite", .product(name: "Crypto", package: "swift-crypto", condition: serverOnly)],
            swiftSettings: strictSettings
        ),
        // The binary framing: pure, standard library only.
        .target(name: "Wire", swiftSettings: strictSettings),
        // The generic RPC runtime: connections, dispatch, calls, limits. Knows nothing of homes.
        .target(
            name: "RPCServer",
            dependencies: ["UV", "TLS", "Wire", "HTTP2", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // The client runtime: callbacks on a loop for the load generator, async/await for everyone else.
        .target(name: "RPCClient", dependencies: ["UV", "TLS", "Wire"], swiftSettings: strictSettings),
        // Protobuf-typed handlers and the built-in services (health, server info).
        .target(
            name: "RPCServices",
            dependencies: [
                "RPCServer", "HomeProto", "UV", "Wire", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strictSettings
        ),
        // The API edge: home.v1.HomeService and AccountService bound to the store, protobuf <-> model,
        // HomeKit code -> status, authentication and idempotency keys.
        .target(
            name: "HomeAPI",
            dependencies: [
                "HomeService", "HomeProto", "RPCServer", "RPCServices", "UV", "Wire",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Crypto", package: "swift-crypto", condition: serverOnly),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The Swift SDK: typed async calls for every method, over RPCClient.
        .target(
            name: "HomeClient",
            dependencies: [
                "RPCClient", "HomeProto", "TLS", "UV", "Wire",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The server: flags, listeners, signals (a library the executable and the tests' server run).
        .target(
            name: "HomedCommand",
            dependencies: [
                "RPCServer", "RPCServices", "TLS", "UV", "Wire", "HomeService", "HomeAPI", "HomeProto",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: serverOnly),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "homed",
            dependencies: [
                "HomedCommand",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: serverOnly),
            ],
            swiftSettings: strictSettings
        ),
        // The end-to-end tests' server for cases that depend on the date: homed on a shifted clock.
        .executableTarget(
            name: "clocked-homed",
            dependencies: [
                "HomedCommand", "HomeService",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: serverOnly),
            ],
            path: "Tests/ClockedHomed",
            swiftSettings: strictSettings
        ),
        // The load generator: pipelined unary load, notification fan-out, and the accessory fleet.
        .executableTarget(
            name: "LoadGen",
            dependencies: [
                "RPCClient", "TLS", "TLSOptions", "UV", "Wire", "HomeProto",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: serverOnly),
                .product(name: "Histogram", package: "hdrhistogram-swift", condition: serverOnly),
            ],
            swiftSettings: strictSettings
        ),
        // The command-line tools' TLS flags (rpc-client's and loadgen's).
        .target(
            name: "TLSOptions",
            dependencies: [
                "RPCClient", "TLS", "UV",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: serverOnly),
            ],
            swiftSettings: strictSettings
        ),
        // The command-line client.
        .executableTarget(
            name: "rpc-client",
            dependencies: [
                // HomeService for the standard catalog only (the simulator's service types).
                "RPCClient", "HomeClient", "HomeProto", "HomeService", "TLSOptions", "UV", "Wire",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: serverOnly),
            ],
            swiftSettings: strictSettings
        ),
        // Invariant checks over Wire, shared by the fuzzer and the tests that replay its findings.
        .target(name: "WireTesting", dependencies: ["Wire"], swiftSettings: strictSettings),
        // Messages generated from proto/ (see proto/README.md); the only SwiftProtobuf importer.
        .target(
            name: "HomeProto",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "WireTests",
            dependencies: ["Wire", "WireTesting", "TestSupport"],
            swiftSettings: strictSettings
        ),
        // Helpers shared by the test targets (loop runners with watchdogs, a seeded generator).
        .target(name: "TestSupport", dependencies: ["UV"], path: "Tests/TestSupport", swiftSettings: strictSettings),
        .testTarget(
            name: "HomeServiceTests",
            dependencies: ["HomeService", "SQLite", "UV", "TestSupport", "store-crash-child"],
            swiftSettings: strictSettings
        ),
        // The process the crash-safety test kills.
        .executableTarget(
            name: "store-crash-child",
            dependencies: ["HomeService"],
            path: "Tests/StoreCrashChild",
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"], swiftSettings: strictSettings),
        .testTarget(name: "UVTests", dependencies: ["UV", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "UV", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "RPCServerTests",
            dependencies: [
                "RPCServer", "RPCClient", "UV", "Wire", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // End to end: a real homed process, through the SDK.
        .testTarget(
            name: "HomeAPITests",
            dependencies: [
                "HomeClient", "HomeAPI", "HomeProto", "HomeService", "RPCClient", "SQLite", "TLS", "UV", "Wire",
                "homed",
                "clocked-homed",
                "rpc-client",
                "LoadGen", "TestSupport",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Crypto", package: "swift-crypto", condition: serverOnly),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HomeProtoTests",
            dependencies: [
                "HomeProto", "RPCServices", "TestSupport", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
