import ArgumentParser
import Foundation
import HomeService
import HomedCommand

// The server the end-to-end tests run when a case depends on the date: `homed` with its clock
// shifted by HOMED_CLOCK_OFFSET_MS milliseconds (negative: back), so that a timer trigger's fire date
// is seconds away instead of minutes, or a case runs at the date and time it names. Built for the
// tests only: the product has no such option.
let offset = ProcessInfo.processInfo.environment["HOMED_CLOCK_OFFSET_MS"].flatMap { Int64($0) } ?? 0
let wallClock = HomeStore.wallClock
do {
    let command = try Homed.parse()
    try command.run { wallClock() + offset }
} catch {
    Homed.exit(withError: error)
}
