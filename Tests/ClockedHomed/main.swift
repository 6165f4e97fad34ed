import ArgumentParser
import Glibc
import HomeService
import HomedCommand

// The server the end-to-end tests run when a case depends on the date: `homed` with its clock
// shifted by the first argument, in milliseconds (negative: back), so that a timer trigger's fire
// date is seconds away instead of minutes, or a case runs at the date and time it names. A first
// argument `@FILE` reads the offset from the file's first 8 bytes (a little-endian Int64) at every
// clock reading, so that a test moves the clock while the server runs (a token's expiry). The other
// arguments are homed's. Built for the tests only: the product has no such option.
//
//   clocked-homed OFFSET-MS|@FILE [homed options...]
let arguments = Array(CommandLine.arguments.dropFirst())
let wallClock = HomeStore.wallClock
let clock: @Sendable () -> Int64
if let first = arguments.first, first.hasPrefix("@") {
    let descriptor = open(String(first.dropFirst()), O_RDONLY)
    let mapped = descriptor < 0 ? nil : mmap(nil, 8, PROT_READ, MAP_SHARED, descriptor, 0)
    guard let mapped, mapped != MAP_FAILED else {
        Homed.exit(withError: ValidationError("cannot map the clock offset file \(first.dropFirst())"))
    }
    // An address, not a pointer, crosses into the clock (a pointer is not Sendable).
    let address = Int(bitPattern: mapped)
    clock = { wallClock() + UnsafePointer<Int64>(bitPattern: address)!.pointee }
} else if let offset = arguments.first.flatMap({ Int64($0) }) {
    clock = { wallClock() + offset }
} else {
    Homed.exit(withError: ValidationError("the first argument is the clock's offset in milliseconds, or @FILE"))
}
do {
    let command = try Homed.parse(Array(arguments.dropFirst()))
    try command.run(clock: clock)
} catch {
    Homed.exit(withError: error)
}
