import HomeService
import UV

/// Keeps tokens' time-bound state: every second, marks the tokens whose expiry has come and ends
/// their streams (so a stream outlives its token's expiry by at most a second; a revoked one's ends
/// at once); every minute of the store's clock, and when the server drains, writes the last uses
/// noted since and forgets tokens expired for a day. A `kill -9` loses at most a minute of uses.
final class TokenUpkeep {
    static let interval: Duration = .seconds(1)
    /// Store-clock milliseconds between two writes of last uses.
    static let tidyInterval: Int64 = 60_000

    private unowned let api: HomeAPI
    private let timer: LoopTimer
    private var nextTidy: Int64 = 0

    init(api: HomeAPI, loop: EventLoop) {
        self.api = api
        timer = LoopTimer(loop: loop)
    }

    func start() {
        nextTidy = api.store.currentTime + Self.tidyInterval
        timer.start(after: Self.interval, repeating: Self.interval) { [unowned self] in tick() }
    }

    /// Stops the timer, writing the uses noted so far.
    func close() {
        guard !timer.isClosed else { return }
        timer.close()
        tidy()
    }

    private func tick() {
        if api.store.expireTokens() { api.subscriptions.endUnauthorized() }
        guard api.store.currentTime >= nextTidy else { return }
        nextTidy = api.store.currentTime + Self.tidyInterval
        tidy()
    }

    private func tidy() {
        // A store that stopped taking changes refuses the write; the uses are lost with it.
        _ = api.store.write { () throws(HomeServiceError) in try api.store.tidyTokens() }
    }
}
