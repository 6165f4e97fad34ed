import HomeService
import Logging
import UV

/// Fires timer triggers on the loop: one timer, set for the earliest next fire of all enabled
/// triggers (not one per trigger). A firing records the fire date (a one-shot disables itself) and
/// runs the trigger's action sets through the accessories, as the server, with the home owner's
/// rights. Fires missed while the server was not running are skipped: after a start, each trigger
/// fires at its next occurrence, and a one-shot whose date passed is disabled.
final class TriggerScheduler {
    /// The longest the timer sleeps: wall-clock jumps are noticed within this.
    static let maxSleepMilliseconds: Int64 = 60_000

    private unowned let api: HomeAPI
    private let timer: LoopTimer
    private let logger = Logger(label: "homed.triggers")
    /// When each enabled trigger fires next, as last computed.
    private var nextFires: [TriggerID: Int64] = [:]

    init(api: HomeAPI, loop: EventLoop) {
        self.api = api
        timer = LoopTimer(loop: loop)
    }

    /// Disables one-shots whose date passed while the server was down, then schedules.
    func start() {
        let now = api.store.currentTime
        let missed = api.store.enabledTriggers(after: now - 1).filter { $0.nextFire == nil }
        if !missed.isEmpty {
            _ = api.store.write { () throws(HomeServiceError) in
                for trigger in missed { try api.store.disableMissedTrigger(trigger.id) }
            }
        }
        reschedule()
    }

    /// Recomputes every enabled trigger's next fire (after a trigger or a time zone changed) and
    /// sets the timer for the earliest.
    func reschedule() {
        guard !timer.isClosed else { return }
        let now = api.store.currentTime
        nextFires = [:]
        for trigger in api.store.enabledTriggers(after: now - 1) {
            if let next = trigger.nextFire { nextFires[trigger.id] = next }
        }
        guard let earliest = nextFires.values.min() else {
            timer.stop()
            return
        }
        let delay = min(max(0, earliest - now), Self.maxSleepMilliseconds)
        timer.start(after: .milliseconds(delay)) { [unowned self] in fireDue() }
    }

    func close() {
        timer.close()
    }

    private func fireDue() {
        let now = api.store.currentTime
        let due = nextFires.filter { $0.value <= now }
        let triggers = Dictionary(
            api.store.enabledTriggers(after: now - 1).map { ($0.id, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        for (id, time) in due.sorted(by: { $0.value < $1.value }) {
            guard let trigger = triggers[id] else { continue }
            fire(trigger, at: time)
        }
        reschedule()
    }

    private func fire(_ trigger: HomeStore.ScheduledTrigger, at time: Int64) {
        let (recorded, _) = api.store.write { () throws(HomeServiceError) in
            try api.store.recordFiring(of: trigger.id, at: time)
        }
        guard case .success = recorded else { return }
        for actionSet in trigger.actionSets {
            let plan: HomeStore.ActionSetPlan
            do throws(HomeServiceError) {
                plan = try api.store.planExecution(of: actionSet, as: trigger.owner)
            } catch {
                logger.warning("a trigger's action set did not run", metadata: ["error": "\(error)"])
                continue
            }
            api.execute(plan, as: trigger.owner, by: .server, session: nil, deadline: nil) { [logger] result, _ in
                if case .failure(let failure) = result {
                    logger.notice(
                        "a trigger's action set ran with failures",
                        metadata: ["action set": "\(actionSet)", "error": "\(failure.error)"]
                    )
                }
            }
        }
    }
}
