/// HomeKit's timer trigger rules (../shared/HOMEKIT.md, "Action sets and triggers"). Dates are
/// milliseconds since the Unix epoch; recurrences are seconds.
public enum TriggerRules {
    public static let minimumRecurrence: Int64 = 5 * 60
    public static let maximumRecurrence: Int64 = 5 * 7 * 24 * 3600
    /// How far ahead an enabled trigger's next fire date may be, in milliseconds.
    public static let maximumLeadTime: Int64 = maximumRecurrence * 1000

    /// - Throws: 70 unless the date is on a whole minute; 28 for a one-shot date not in the future.
    public static func checkFireDate(_ fireDate: Int64, recurrence: Int64?, now: Int64) throws(HomeServiceError) {
        guard fireDate % 60_000 == 0 else {
            throw HomeServiceError(
                .dateMustBeOnSpecifiedBoundaries,
                "fire date \(fireDate) ms must fall on a whole minute (seconds 0)"
            )
        }
        if recurrence == nil && fireDate <= now {
            throw HomeServiceError(
                .fireDateInPast,
                "a one-shot trigger's fire date \(fireDate) ms is not in the future"
            )
        }
    }

    /// - Throws: 69 unless whole minutes; 42 under 5 minutes; 72 over 5 weeks.
    public static func checkRecurrence(_ seconds: Int64) throws(HomeServiceError) {
        guard seconds % 60 == 0 else {
            throw HomeServiceError(
                .recurrenceMustBeOnSpecifiedBoundaries,
                "recurrence of \(seconds) s must be whole minutes"
            )
        }
        guard seconds >= minimumRecurrence else {
            throw HomeServiceError(.recurrenceTooSmall, "recurrence of \(seconds) s is under 5 minutes")
        }
        guard seconds <= maximumRecurrence else {
            throw HomeServiceError(.recurrenceTooLarge, "recurrence of \(seconds) s is over 5 weeks")
        }
    }

    /// When the trigger fires next after `now`: the fire date if still ahead, else the next
    /// recurrence after it; `nil` for a one-shot whose date has passed.
    public static func nextFireDate(fireDate: Int64, recurrence: Int64?, now: Int64) -> Int64? {
        if fireDate > now { return fireDate }
        guard let recurrence, recurrence > 0 else { return nil }
        let period = recurrence * 1000
        return fireDate + ((now - fireDate) / period + 1) * period
    }

    /// - Throws: 26 without action sets; 25 for an action set without actions; 28 for a passed
    ///   one-shot; 71 if the next fire date is 5 weeks away or more.
    public static func checkCanEnable(
        _ trigger: TimerTrigger,
        actionSets: [ActionSet],
        now: Int64
    )
        throws(HomeServiceError)
    {
        guard !actionSets.isEmpty else {
            throw HomeServiceError(.noRegisteredActionSets, "trigger \"\(trigger.name)\" has no action sets")
        }
        if let empty = actionSets.first(where: \.actions.isEmpty) {
            throw HomeServiceError(
                .noActionsInActionSet,
                "action set \"\(empty.name)\" of trigger \"\(trigger.name)\" has no actions"
            )
        }
        guard let next = nextFireDate(fireDate: trigger.fireDate, recurrence: trigger.recurrence, now: now) else {
            throw HomeServiceError(.fireDateInPast, "trigger \"\(trigger.name)\" will never fire again")
        }
        guard next - now < maximumLeadTime else {
            throw HomeServiceError(
                .cannotActivateTriggerTooFarInFuture,
                "trigger \"\(trigger.name)\" would first fire 5 weeks or more from now"
            )
        }
    }
}
