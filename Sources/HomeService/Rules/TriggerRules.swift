import Foundation

/// HomeKit's timer trigger rules (docs/HOMEKIT.md, "Action sets and triggers"). Dates are
/// milliseconds since the Unix epoch; recurrences are calendar units in the home's time zone.
///
/// Every number here can come from a client, so each is bounded before any arithmetic: dates lie in
/// ``earliestDate``...``latestDate`` and recurrences are compared by division, never multiplied
/// unchecked.
public enum TriggerRules {
    public static let minimumRecurrenceSeconds: Int64 = 5 * 60
    public static let maximumRecurrenceSeconds: Int64 = 5 * 7 * 24 * 3600
    /// How far ahead an enabled trigger's next fire date may be, in milliseconds.
    public static let maximumLeadTime: Int64 = maximumRecurrenceSeconds * 1000
    /// 1970-01-01T00:00:00Z.
    public static let earliestDate: Int64 = 0
    /// 9999-12-31T23:59:00Z, the last whole minute a four-digit year can name.
    public static let latestDate: Int64 = 253_402_300_740_000

    /// - Throws: 3 for a date outside ``earliestDate``...``latestDate``; 70 unless the date is on a
    ///   whole minute; 28 for a one-shot date not in the future.
    public static func checkFireDate(
        _ fireDate: Int64,
        recurrence: TriggerRecurrence?,
        now: Int64
    ) throws(HomeServiceError) {
        try checkDate(fireDate, "fire date")
        guard fireDate % 60_000 == 0 else {
            throw HomeServiceError(
                .dateMustBeOnSpecifiedBoundaries,
                "fire date \(described(fireDate)) must fall on a whole minute (seconds 0)"
            )
        }
        if recurrence == nil && fireDate <= now {
            throw HomeServiceError(
                .fireDateInPast,
                "a one-shot trigger's fire date \(described(fireDate)) is not in the future"
            )
        }
    }

    /// - Throws: 3 for a date a client sent outside ``earliestDate``...``latestDate``.
    public static func checkDate(_ date: Int64, _ what: String) throws(HomeServiceError) {
        guard date >= earliestDate && date <= latestDate else {
            throw HomeServiceError(
                .invalidParameter,
                "\(what) \(date) ms is outside 1970-01-01 to 9999-12-31"
            )
        }
    }

    /// Checks a recurrence and gives it in its largest exact unit of minutes or more (seconds become
    /// minutes).
    /// - Throws: 69 for seconds that are not whole minutes, or a count under 1; 42 under 5 minutes;
    ///   72 over 5 weeks.
    public static func checkRecurrence(
        _ recurrence: TriggerRecurrence
    ) throws(HomeServiceError)
        -> TriggerRecurrence
    {
        var recurrence = recurrence
        if recurrence.unit == .second {
            guard recurrence.count % 60 == 0 else {
                throw HomeServiceError(
                    .recurrenceMustBeOnSpecifiedBoundaries,
                    "recurrence of \(recurrence) must be whole minutes"
                )
            }
            recurrence = .minutes(recurrence.count / 60)
        }
        guard recurrence.count >= 1 else {
            throw HomeServiceError(
                .recurrenceMustBeOnSpecifiedBoundaries,
                "recurrence of \(recurrence) must be a positive number of \(recurrence.unit.rawValue)s"
            )
        }
        // Compared by division: a client's count times the unit could overflow.
        guard recurrence.count <= maximumRecurrenceSeconds / recurrence.unit.seconds else {
            throw HomeServiceError(.recurrenceTooLarge, "recurrence of \(recurrence) is over 5 weeks")
        }
        guard recurrence.count * recurrence.unit.seconds >= minimumRecurrenceSeconds else {
            throw HomeServiceError(.recurrenceTooSmall, "recurrence of \(recurrence) is under 5 minutes")
        }
        return recurrence
    }

    /// - Throws: 3 unless `identifier` names a time zone of the IANA database ("Europe/Berlin").
    public static func checkTimeZone(_ identifier: String) throws(HomeServiceError) {
        try TextRules.checkLength(identifier, of: "time zone")
        guard TimeZone(identifier: identifier) != nil else {
            throw HomeServiceError(
                .invalidParameter,
                "\"\(identifier)\" is not a time zone of the IANA database (such as \"Europe/Berlin\" or \"UTC\")"
            )
        }
    }

    /// When the trigger fires next after `now`: the fire date if still ahead, else the first
    /// recurrence after `now`; `nil` for a one-shot whose date has passed. Days and weeks are
    /// counted on the calendar of `timeZone`, so the wall-clock time stays the same across
    /// daylight-saving changes. Dates must be in ``earliestDate``...``latestDate`` (checked on the
    /// way in), so nothing here can overflow.
    public static func nextFireDate(
        fireDate: Int64,
        recurrence: TriggerRecurrence?,
        timeZone: String,
        now: Int64
    ) -> Int64? {
        if fireDate > now { return fireDate }
        guard let recurrence, recurrence.count > 0 else { return nil }
        let elapsed = now - fireDate
        switch recurrence.unit {
        case .second, .minute, .hour:
            let period = recurrence.count * recurrence.unit.seconds * 1000
            return fireDate + (elapsed / period + 1) * period
        case .day, .week:
            let days = Int(recurrence.count * (recurrence.unit == .week ? 7 : 1))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!
            let start = Date(timeIntervalSince1970: Double(fireDate) / 1000)
            // Jump close with the nominal length, then step: a calendar day is 23 to 25 hours.
            var periods = max(0, Int(elapsed / (Int64(days) * 86_400_000)) - 1)
            while true {
                guard let candidate = calendar.date(byAdding: .day, value: periods * days, to: start) else {
                    return nil
                }
                let milliseconds = Int64((candidate.timeIntervalSince1970 * 1000).rounded())
                if milliseconds > now { return milliseconds }
                periods += 1
            }
        }
    }

    /// - Throws: 26 without action sets; 25 for an action set without actions; 28 for a passed
    ///   one-shot; 71 if the next fire date is 5 weeks away or more.
    public static func checkCanEnable(
        _ trigger: TimerTrigger,
        actionSets: [ActionSet],
        timeZone: String,
        now: Int64
    )
        throws(HomeServiceError)
    {
        try checkHasActions(trigger, actionSets: actionSets)
        guard
            let next = nextFireDate(
                fireDate: trigger.fireDate,
                recurrence: trigger.recurrence,
                timeZone: timeZone,
                now: now
            )
        else {
            throw HomeServiceError(.fireDateInPast, "trigger \"\(trigger.name)\" will never fire again")
        }
        guard next - now < maximumLeadTime else {
            throw HomeServiceError(
                .cannotActivateTriggerTooFarInFuture,
                "trigger \"\(trigger.name)\" would first fire at \(described(next)), 5 weeks or more from now"
            )
        }
    }

    /// A date as a person reads it and as the request carried it: "2027-01-15T07:00:30Z (1799996430000 ms)".
    /// Only for dates already checked to lie in ``earliestDate``...``latestDate``.
    static func described(_ date: Int64) -> String {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: date % 1000 != 0)
        return "\(Date(timeIntervalSince1970: Double(date) / 1000).formatted(style)) (\(date) ms)"
    }

    /// - Throws: 26 without action sets; 25 for an action set without actions.
    public static func checkHasActions(_ trigger: TimerTrigger, actionSets: [ActionSet]) throws(HomeServiceError) {
        guard !actionSets.isEmpty else {
            throw HomeServiceError(.noRegisteredActionSets, "trigger \"\(trigger.name)\" has no action sets")
        }
        if let empty = actionSets.first(where: \.actions.isEmpty) {
            throw HomeServiceError(
                .noActionsInActionSet,
                "action set \"\(empty.name)\" of trigger \"\(trigger.name)\" has no actions"
            )
        }
    }
}
