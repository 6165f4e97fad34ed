// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

// The home domain core without network: characteristic cache reads and writes, durable writes
// through group commit, and a large store's load time, file size and memory. See bench/RESULTS.md.
let package = Package(
    name: "CoreBench",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "core-bench",
            dependencies: [.product(name: "HomeService", package: rootIdentity)],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
