// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

// What users would pick instead of homed: the same home store behind grpc-swift-2 on SwiftNIO's
// HTTP/2, serving the same methods with the same messages, for bench/grpc-vs-homed.sh. A separate
// package, so that the main one never builds gRPC or NIO. See bench/RESULTS.md.
let package = Package(
    name: "GRPCBench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/grpc/grpc-swift-2", exact: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", exact: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "homed-grpc",
            dependencies: [
                .product(name: "HomeService", package: rootIdentity),
                .product(name: "HomeProto", package: rootIdentity),
                .product(name: "HomeAPI", package: rootIdentity),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
