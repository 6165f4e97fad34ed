import ArgumentParser
import HomeService
import HomedCommand

// The server the end-to-end tests run when a case depends on the date: `homed` with its clock
// shifted by the first argument, in milliseconds (negative: back), so that a timer trigger's fire
// date is seconds away instead of minutes, or a case runs at the date and time it names. The other
// arguments are homed's. Built for the tests only: the product has no such option.
//
//   clocked-homed OFFSET-MS [homed options...]
let arguments = Array(CommandLine.arguments.dropFirst())
guard let offset = arguments.first.flatMap({ Int64($0) }) else {
    Homed.exit(withError: ValidationError("the first argument is the clock's offset in milliseconds"))
}
let wallClock = HomeStore.wallClock
do {
    let command = try Homed.parse(Array(arguments.dropFirst()))
    try command.run { wallClock() + offset }
} catch {
    Homed.exit(withError: error)
}
