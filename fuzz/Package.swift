// swift-tools-version: 6.1
// A libFuzzer target over the frame decoder; kept out of the main package because it builds with
// -sanitize=fuzzer. See fuzz/README.md.
import PackageDescription

let package = Package(
    name: "HomeRPCFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzFrameDecoder",
            dependencies: [.product(name: "WireTesting", package: "main")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        )
    ]
)
