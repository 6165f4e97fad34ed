import HomeService
import UV

/// Commands out with accessories, each waiting for its answer until its deadline. One timer sweeps
/// the deadlines while any command waits, so many commands in flight cost no timer each.
final class ForwardedCommands {
    /// What a command's requester learns: the value (for a read), or why it failed.
    typealias Completion = (Result<CharacteristicValue?, HomeServiceError>) -> Void

    struct Pending {
        /// The link the command went out on, and its connection: only that connection may answer.
        let link: ObjectIdentifier
        let connectionID: Int
        /// The accessory it is for, whose name the messages give (looked up only for one: a name
        /// kept with every command was a lookup and a string to copy and release per write).
        let accessory: AccessoryID
        let expectsValue: Bool
        let deadline: UInt64
        let completion: Completion
    }

    /// How often deadlines are checked: the latest a timeout is answered after its deadline.
    static let sweepMilliseconds: UInt64 = 20

    private let loop: EventLoop
    private let store: HomeStore
    private var pending: [UInt64: Pending] = [:]
    private var nextID: UInt64 = 1
    /// Stopped, not closed, while no command waits: one write at a time made and closed a timer
    /// for each (2,000 instructions a write). ``close()`` closes it.
    private var timer: LoopTimer?
    private lazy var sweepHandler: () -> Void = { [weak self] in self?.sweep() }

    init(loop: EventLoop, store: HomeStore) {
        self.loop = loop
        self.store = store
    }

    /// The name of the accessory `command` is for, as the messages give it: its id once it is gone
    /// (a removal fails its commands when it commits; a sweep may come first).
    func accessoryName(_ command: Pending) -> String {
        let name = store.accessoryName(command.accessory)
        return name.isEmpty ? "\(command.accessory)" : name
    }

    var count: Int { pending.count }

    /// Registers a command; its id goes out with it.
    func add(_ command: consuming Pending) -> UInt64 {
        let id = nextID
        nextID += 1
        pending[id] = command
        let sweeper = timer ?? LoopTimer(loop: loop)
        timer = sweeper
        if !sweeper.isActive {
            sweeper.start(
                after: .milliseconds(Self.sweepMilliseconds),
                repeating: .milliseconds(Self.sweepMilliseconds),
                sweepHandler
            )
        }
        return id
    }

    /// Takes the command `id` if an answer on `connectionID` may settle it.
    func take(_ id: UInt64, answeredOn connectionID: Int) -> Pending? {
        // Taken out of its slot: reading it and then setting `nil` copied it and destroyed the stored
        // one, each through its fields.
        guard let index = pending.index(forKey: id), pending.values[index].connectionID == connectionID else {
            return nil
        }
        let command = pending.remove(at: index).value
        stopTimerIfIdle()
        return command
    }

    /// Fails every command out on `link` (it went away).
    func failAll(on link: ObjectIdentifier, with error: HomeServiceError) {
        let ended = pending.filter { $0.value.link == link }
        for id in ended.keys { pending[id] = nil }
        stopTimerIfIdle()
        for command in ended.values { command.completion(.failure(error)) }
    }

    /// Fails every command (the server is stopping) and closes the timer.
    func close() {
        let all = pending
        pending = [:]
        timer?.close()
        timer = nil
        for command in all.values {
            command.completion(
                .failure(
                    HomeServiceError(
                        .accessoryNotReachable,
                        "the server is stopping: the accessory's answer is lost (a write sets a value; retry it)"
                    )
                )
            )
        }
    }

    private func sweep() {
        let now = loop.now
        let expired = pending.filter { $0.value.deadline <= now }
        for id in expired.keys { pending[id] = nil }
        stopTimerIfIdle()
        for command in expired.values {
            command.completion(
                .failure(
                    HomeServiceError(
                        .operationTimedOut,
                        "accessory \"\(accessoryName(command))\" did not answer in time"
                    )
                )
            )
        }
    }

    private func stopTimerIfIdle() {
        guard pending.isEmpty, let timer else { return }
        timer.stop()
    }
}

/// HAP's statuses for a refused request, and the HomeKit code a controller gets for each
/// (docs/API.md prints this table).
enum HAPStatus {
    static let table: [(status: Int32, meaning: String, code: HomeKitErrorCode)] = [
        (-70401, "insufficient privileges", .insufficientPrivileges),
        (-70402, "communication failure", .accessoryNotReachable),
        (-70403, "busy", .accessoryIsBusy),
        (-70404, "read-only", .readOnlyCharacteristic),
        (-70405, "write-only", .writeOnlyCharacteristic),
        (-70406, "notification not supported", .notificationNotSupported),
        (-70407, "out of resources", .accessoryOutOfResources),
        (-70408, "timed out", .operationTimedOut),
        (-70409, "does not exist", .notFound),
        (-70410, "invalid value", .invalidValueType),
        // The write's additional authorization (HAP's "aa" property): HomeKit's own code for it, not
        // 17, which is about the user's rights (-70401).
        (-70411, "insufficient authorization", .invalidOrMissingAuthorizationData),
        (-70412, "not allowed in current state", .operationNotSupported),
    ]

    /// The error for an accessory's refusal; a status outside HAP's is an invalid response (50).
    static func error(for status: Int32, accessory name: String) -> HomeServiceError {
        guard let entry = table.first(where: { $0.status == status }) else {
            return HomeServiceError(
                .accessorySentInvalidResponse,
                "accessory \"\(name)\" answered with \(status), which is not a HAP status"
            )
        }
        return HomeServiceError(entry.code, "accessory \"\(name)\" refused: \(entry.meaning) (HAP \(status))")
    }
}
