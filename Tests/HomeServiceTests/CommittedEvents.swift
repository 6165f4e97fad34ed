@testable import HomeService

/// Runs `body` and collects the changes it committed, in order.
func committedEvents(in store: HomeStore, _ body: () throws -> Void) rethrows -> [ChangeEvent] {
    store.waitForCommits()
    var seen: [ChangeEvent] = []
    store.changeObserver = { seen.append($0.event) }
    defer { store.changeObserver = nil }
    try body()
    store.waitForCommits()
    return seen
}
