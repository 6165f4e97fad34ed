import Dispatch
import Synchronization

/// Work started on another thread whose result one caller collects later: start-up runs the integrity
/// check and the characteristic load beside the rest of the load this way.
final class BackgroundWork<Value: Sendable>: Sendable {
    private let done = DispatchGroup()
    private let outcome = Mutex<Result<Value, StoreError>?>(nil)

    init(_ work: @escaping @Sendable () throws(StoreError) -> Value) {
        DispatchQueue.global().async(group: done) { [self] in
            let result = Result { () throws(StoreError) -> Value in try work() }
            outcome.withLock { $0 = result }
        }
    }

    /// Waits for the work to finish and returns its value or throws its error.
    func value() throws(StoreError) -> Value {
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
