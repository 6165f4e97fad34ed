import Foundation
import HomeAPI
import HomeClient
import HomeProto
import Testing
import Wire

/// The cases of ``HomeKitCodeTests`` for action sets and timer triggers.
extension HomeKitCodeTests {
    static let actionSetCases: [Case] = [
        Case("AddActionSet", 31, "a set of a similar name") { s in
            { _ = try await s.home.addActionSet(named: "EVENING") }
        },
        Case("AddActionSet", 49, "past the action sets per home") { s in
            let newcomer = try await s.limited.newcomer()
            return { _ = try await newcomer.home.addActionSet(named: "Fifth") }
        },
        Case("RemoveActionSet", 83, "a built-in set") { s in
            let builtIn = try await s.home.get().actionSets.first { $0.id != s.o.actionSet }!
            return { try await s.home.removeActionSet(builtIn.id.uuid) }
        },
        Case("RenameActionSet", 33, "its own name") { s in
            { _ = try await s.home.renameActionSet(s.o.actionSet.uuid, to: "evening") }
        },
        Case("RenameActionSet", 31, "a room's name") { s in
            { _ = try await s.home.renameActionSet(s.o.actionSet.uuid, to: "Den") }
        },
        Case("AddAction", 30, "the action is in another set") { s in
            let spare = try await s.home.addActionSet(named: "Spare")
            return {
                try await s.home.addAction(
                    writing: .bool(false),
                    to: s.lampOn,
                    in: spare.id.uuid,
                    actionID: s.o.action.uuid
                )
            }
        },
        Case("AddAction", 1, "the set already writes that characteristic") { s in
            { try await s.home.addAction(writing: .bool(false), to: s.lampOn, in: s.o.actionSet.uuid) }
        },
        Case("AddAction", 5, "a read-only characteristic") { s in
            let temperature = s.o.plug.characteristic(Advertised.currentTemperature).id.uuid
            return { try await s.home.addAction(writing: .float(20), to: temperature, in: s.o.actionSet.uuid) }
        },
        Case("AddAction", 11, "a characteristic of another home") { s in
            let other = try await s.otherHome()
            let on = other.lamp.characteristic(Advertised.on).id.uuid
            return { try await s.home.addAction(writing: .bool(true), to: on, in: s.o.actionSet.uuid) }
        },
        Case("AddAction", 49, "past the actions per set") { s in
            let newcomer = try await s.limited.newcomer()
            let lamp = try await s.limited.simulators.pair(Advertised.bulb("Lamp"), into: newcomer.home).accessories[0]
            let builtIn = try await newcomer.home.get().actionSets[0].id.uuid
            try await newcomer.home.addAction(
                writing: .bool(true),
                to: lamp.characteristic(Advertised.on).id.uuid,
                in: builtIn
            )
            let brightness = lamp.characteristic(Advertised.brightness).id.uuid
            return { try await newcomer.home.addAction(writing: .int(5), to: brightness, in: builtIn) }
        },
        Case("RemoveAction", 2, "not in the set") { s in
            { try await s.home.removeAction(UUID(), from: s.o.actionSet.uuid) }
        },
        Case("UpdateActionTargetValue", 2, "not in the set") { s in
            { try await s.home.updateTargetValue(of: UUID(), in: s.o.actionSet.uuid, to: .bool(false)) }
        },
        Case("ExecuteActionSet", 25, "no actions") { s in
            let empty = try await s.home.addActionSet(named: "Empty")
            return { try await s.home.executeActionSet(empty.id.uuid) }
        },
        Case("ExecuteActionSet", 65, "executing now") { s in
            await s.o.lampSimulator.setWriteBehaviour(.ignore)
            let first = Task { try await s.home.executeActionSet(s.o.actionSet.uuid) }
            try await eventually { try await s.home.get().actionSets.first { $0.id == s.o.actionSet }!.executing }
            return {
                defer { first.cancel() }
                try await s.home.executeActionSet(s.o.actionSet.uuid)
            }
        },
        // The set's last execution time changes, as in HomeKit, whatever the writes' outcome.
        Case("ExecuteActionSet", 63, "every write refused", changes: true) { s in
            await s.o.lampSimulator.setWriteBehaviour(.refuse(hapStatus: -70402))
            return { try await s.home.executeActionSet(s.o.actionSet.uuid) }
        },
        Case("ExecuteActionSet", 64, "one write of two refused", changes: true) { s in
            let plugOn = s.o.plug.characteristic(Advertised.on).id.uuid
            try await s.home.addAction(writing: .bool(true), to: plugOn, in: s.o.actionSet.uuid)
            await s.o.plugSimulator.setWriteBehaviour(.refuse(hapStatus: -70402))
            return { try await s.home.executeActionSet(s.o.actionSet.uuid) }
        },
    ]

    static let triggerCases: [Case] =
        recurrenceCases("AddTrigger") { s, recurrence in
            _ = try await s.home.addTrigger(
                named: "Repeating",
                fireDate: Date(milliseconds: s.o.fireDate),
                recurrence: recurrence
            )
        }
        + recurrenceCases("UpdateTriggerRecurrence") { s, recurrence in
            _ = try await s.home.updateRecurrence(of: s.o.trigger.uuid, to: recurrence)
        }
        + fireDateAndEnablingCases

    /// The recurrence codes (69, 42, 72) of a method that takes a recurrence.
    static func recurrenceCases(
        _ method: String,
        _ call: @escaping @Sendable (Scene, Recurrence) async throws -> Void
    ) -> [Case] {
        let recurrences: [(Int32, String, Recurrence)] = [
            (69, "90 seconds", Recurrence(90, .second)),
            (42, "every minute", Recurrence(1, .minute)),
            (72, "every 6 weeks", Recurrence(6, .week)),
        ]
        return recurrences.map { code, what, recurrence in
            Case(method, code, what) { s in { try await call(s, recurrence) } }
        }
    }

    static let fireDateAndEnablingCases: [Case] = [
        Case("AddTrigger", 31, "a room's name") { s in
            { _ = try await s.home.addTrigger(named: "Den", fireDate: Date(milliseconds: s.o.fireDate)) }
        },
        Case("AddTrigger", 3, "a date after 9999") { s in
            { _ = try await s.home.addTrigger(named: "Late", fireDate: Date(milliseconds: 400_000_000_000_000)) }
        },
        Case("AddTrigger", 70, "not on a whole minute") { s in
            { _ = try await s.home.addTrigger(named: "Odd", fireDate: Date(milliseconds: s.o.fireDate + 1_000)) }
        },
        Case("AddTrigger", 28, "a one-shot date in the past") { s in
            { _ = try await s.home.addTrigger(named: "Past", fireDate: Date(milliseconds: s.o.fireDate - 7_200_000)) }
        },
        Case("AddTrigger", 49, "past the triggers per home") { s in
            let newcomer = try await s.limited.newcomer()
            let date = Date(milliseconds: s.o.fireDate)
            _ = try await newcomer.home.addTrigger(named: "First", fireDate: date)
            return { _ = try await newcomer.home.addTrigger(named: "Second", fireDate: date) }
        },
        Case("RenameTrigger", 33, "its own name") { s in
            { _ = try await s.home.renameTrigger(s.o.trigger.uuid, to: "DUSK") }
        },
        Case("RenameTrigger", 31, "a room's name") { s in
            { _ = try await s.home.renameTrigger(s.o.trigger.uuid, to: "Den") }
        },
        Case("EnableTrigger", 26, "no action sets") { s in
            let bare = try await s.home.addTrigger(named: "Bare", fireDate: Date(milliseconds: s.o.fireDate))
            return { _ = try await s.home.enableTrigger(bare.id.uuid) }
        },
        Case("EnableTrigger", 25, "an action set without actions") { s in
            let empty = try await s.home.addActionSet(named: "Empty")
            try await s.home.addActionSet(empty.id.uuid, toTrigger: s.o.trigger.uuid)
            return { _ = try await s.home.enableTrigger(s.o.trigger.uuid) }
        },
        Case("EnableTrigger", 28, "a one-shot whose date passed") { _ in
            // The server's clock a second before a whole minute: the trigger's date passes at once.
            let now = (Int64(Date().timeIntervalSince1970 * 1000) / 60_000 + 1) * 60_000 - 1_000
            let clocked = try await ClockedServer(at: now, in: "UTC")
            let trigger = try await clocked.triggerRunningTheAction(from: now + 1_000, every: nil)
            try await Task.sleep(for: .seconds(1.5))
            return { try await clocked.finally { _ = try await clocked.home.enableTrigger(trigger) } }
        },
        Case("EnableTrigger", 71, "first fire 6 weeks ahead") { s in
            let far = Date(milliseconds: s.o.fireDate + 6 * 7 * 86_400_000)
            let trigger = try await s.home.addTrigger(named: "Far", fireDate: far)
            try await s.home.addActionSet(s.o.actionSet.uuid, toTrigger: trigger.id.uuid)
            return { _ = try await s.home.enableTrigger(trigger.id.uuid) }
        },
        Case("UpdateTriggerFireDate", 3, "a date before 1970") { s in
            { _ = try await s.home.updateFireDate(of: s.o.trigger.uuid, to: Date(milliseconds: -60_000)) }
        },
        Case("UpdateTriggerFireDate", 70, "not on a whole minute") { s in
            { _ = try await s.home.updateFireDate(of: s.o.trigger.uuid, to: Date(milliseconds: s.o.fireDate + 30_000)) }
        },
        Case("UpdateTriggerFireDate", 28, "a one-shot date in the past") { s in
            let once = try await s.home.addTrigger(named: "Once", fireDate: Date(milliseconds: s.o.fireDate))
            return {
                _ = try await s.home.updateFireDate(of: once.id.uuid, to: Date(milliseconds: s.o.fireDate - 7_200_000))
            }
        },
        Case("UpdateTriggerFireDate", 71, "an enabled trigger moved 6 weeks ahead") { s in
            _ = try await s.home.enableTrigger(s.o.trigger.uuid)
            let far = Date(milliseconds: s.o.fireDate + 6 * 7 * 86_400_000)
            return { _ = try await s.home.updateFireDate(of: s.o.trigger.uuid, to: far) }
        },
        Case("UpdateTriggerRecurrence", 71, "5 weeks over a daylight-saving change make more than 5") { s in
            try await daylightSavingTrigger()
        },
        Case("UpdateTriggerRecurrence", 28, "one-shot with a date in the past") { s in
            let daily = try await s.home.addTrigger(
                named: "Daily",
                fireDate: Date(milliseconds: s.o.fireDate - 7_200_000),
                recurrence: Recurrence(1, .day)
            )
            return { _ = try await s.home.updateRecurrence(of: daily.id.uuid, to: nil) }
        },
        Case("AddActionSetToTrigger", 1, "already attached") { s in
            { _ = try await s.home.addActionSet(s.o.actionSet.uuid, toTrigger: s.o.trigger.uuid) }
        },
        Case("AddActionSetToTrigger", 11, "an action set of another home") { s in
            let other = try await s.otherHome()
            let set = try await other.home.addActionSet(named: "Away")
            return { _ = try await s.home.addActionSet(set.id.uuid, toTrigger: s.o.trigger.uuid) }
        },
        Case("RemoveActionSetFromTrigger", 2, "not attached") { s in
            let spare = try await s.home.addActionSet(named: "Spare")
            return { _ = try await s.home.removeActionSet(spare.id.uuid, fromTrigger: s.o.trigger.uuid) }
        },
    ]

    /// An enabled daily trigger in Berlin that last fired on 2027-10-04 at midnight, on a server
    /// whose clock reads 30 s later; the call makes it recur every 5 weeks. Europe's clocks go back
    /// on 2027-10-31, so 5 calendar weeks later is 5 weeks and an hour away: too far to stay enabled.
    static func daylightSavingTrigger() async throws -> Call {
        let lastFire: Int64 = 1_822_600_800_000  // 2027-10-03T22:00:00Z, midnight in Berlin
        let clocked = try await ClockedServer(at: lastFire + 30_000, in: "Europe/Berlin")
        let trigger = try await clocked.triggerRunningTheAction(from: lastFire, every: Recurrence(1, .day))
        _ = try await clocked.home.enableTrigger(trigger)
        return {
            try await clocked.finally {
                _ = try await clocked.home.updateRecurrence(of: trigger, to: Recurrence(5, .week))
            }
        }
    }

}
