// The child process of the crash-safety test (Tests/HomeServiceTests/CrashSafetyTests.swift).
//
//     store-crash-child <store path> <seed>
//
// Opens the store, prints "ready", then adds rooms forever in bursts of 1–32, printing
// "ack <room name>" for each one only after its commit returned. The parent kills it with SIGKILL at
// a random moment and checks that every acknowledged room is in the store.
import Foundation
import HomeService

let arguments = CommandLine.arguments
guard arguments.count == 3, let seed = UInt64(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: store-crash-child <store path> <seed>\n".utf8))
    exit(64)
}

/// A small deterministic generator (splitmix64), so a failing run can be repeated.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

do {
    var random = SplitMix(state: seed)
    var unlimited = ObjectLimits()
    unlimited.roomsPerHome = .max
    let store = try HomeStore.open(
        .file(path: arguments[1]),
        configuration: HomeStore.Configuration(limits: unlimited, locksFileExclusively: true)
    )
    let owner = store.owner!.id
    let home = try store.homes(of: owner).first ?? store.addHome(named: "Crash Home", as: owner)
    store.waitForCommits()
    print("ready")
    fflush(nil)
    var number = 0
    while true {
        var names: [String] = []
        for _ in 0..<Int.random(in: 1...32, using: &random) {
            number += 1
            let name = "Room \(seed) \(number)"
            _ = try store.addRoom(named: name, to: home.id, as: owner)
            names.append(name)
        }
        if let failure = store.waitForCommits() {
            FileHandle.standardError.write(Data("commit failed: \(failure)\n".utf8))
            exit(1)
        }
        print(names.map { "ack \($0)" }.joined(separator: "\n"))
        fflush(nil)
    }
} catch {
    FileHandle.standardError.write(Data("store-crash-child: \(error)\n".utf8))
    exit(1)
}
