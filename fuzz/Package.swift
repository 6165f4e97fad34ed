// swift-tools-version: 6.1
// A libFuzzer target over the frame decoder; kept out of the main package because it builds with
// -sanitize=fuzzer. See fuzz/README.md.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is whatever the clone is called.
let rootIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "HomeRPCFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzFrameDecoder",
            dependencies: [.product(name: "WireTesting", package: rootIdentity)],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        )
    ]
)
