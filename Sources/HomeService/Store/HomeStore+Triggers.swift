/// Timer triggers.
extension HomeStore {
    /// Adds a trigger, disabled.
    /// - Throws: the naming codes; 49 past the home's trigger limit; 3, 70, 28 for the date; 69, 42,
    ///   72 for the recurrence.
    public func addTrigger(
        named name: String,
        fireDate: Int64,
        recurrence: TriggerRecurrence? = nil,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> TimerTrigger {
        try beginMutation()
        defer { endMutation() }
        _ = try homeForAdding(name, NamedKinds.trigger, to: homeID, as: account)
        let recurrence = try recurrence.map { (recurrence) throws(HomeServiceError) in
            try TriggerRules.checkRecurrence(recurrence)
        }
        try TriggerRules.checkFireDate(fireDate, recurrence: recurrence, now: now)
        let trigger = TimerTrigger(
            id: .random(),
            home: homeID,
            name: name,
            isEnabled: false,
            fireDate: fireDate,
            recurrence: recurrence,
            actionSets: [],
            lastFireDate: nil,
            sequence: nextSequenceNumber()
        )
        insert(trigger, NamedKinds.trigger, announcedBy: account)
        return trigger
    }

    public func removeTrigger(_ id: TriggerID, as account: AccountID) throws(HomeServiceError) {
        try remove(id, NamedKinds.trigger, as: account)
    }

    public func renameTrigger(_ id: TriggerID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try rename(id, NamedKinds.trigger, to: name, as: account)
    }

    /// - Throws: when enabling, 26, 25, 28 or 71 (``TriggerRules/checkCanEnable(_:actionSets:now:)``).
    public func enableTrigger(_ id: TriggerID, _ enabled: Bool, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .enableTrigger)
        guard trigger.isEnabled != enabled else { return }
        if enabled { try checkCanEnable(trigger) }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.isEnabled = enabled }
    }

    /// - Throws: 70, 28; for an enabled trigger also 71.
    public func updateFireDate(of id: TriggerID, to fireDate: Int64, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        var (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .updateTriggerFireDate)
        try TriggerRules.checkFireDate(fireDate, recurrence: trigger.recurrence, now: now)
        trigger.fireDate = fireDate
        if trigger.isEnabled { try checkCanEnable(trigger) }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.fireDate = fireDate }
    }

    /// Sets the recurrence, or with `nil` makes the trigger one-shot.
    /// - Throws: 69, 42, 72; 28 for a one-shot whose date has passed; for an enabled trigger also 71.
    public func updateRecurrence(
        of id: TriggerID,
        to recurrence: TriggerRecurrence?,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        var (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .updateTriggerRecurrence)
        let recurrence = try recurrence.map { (recurrence) throws(HomeServiceError) in
            try TriggerRules.checkRecurrence(recurrence)
        }
        if recurrence == nil && trigger.fireDate <= now {
            throw HomeServiceError(
                .fireDateInPast,
                "trigger \"\(trigger.name)\" cannot become one-shot: its fire date has passed"
            )
        }
        trigger.recurrence = recurrence
        if trigger.isEnabled { try checkCanEnable(trigger) }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.recurrence = recurrence }
    }

    /// - Throws: 2 for an action set of another home; 1 if already attached.
    public func addActionSet(
        _ actionSetID: ActionSetID,
        toTrigger id: TriggerID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .addActionSetToTrigger)
        let actionSet = try sameHome(
            actionSetID,
            in: actionSets,
            kind: "action set",
            home: \.home,
            as: home.id,
            for: account
        )
        guard !trigger.actionSets.contains(actionSetID) else {
            throw HomeServiceError(
                .alreadyExists,
                "action set \"\(actionSet.name)\" is already in trigger \"\(trigger.name)\""
            )
        }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.actionSets.append(actionSetID) }
    }

    /// Detaches an action set; a trigger left without any is disabled.
    /// - Throws: 2 if it is not attached.
    public func removeActionSet(
        _ actionSetID: ActionSetID,
        fromTrigger id: TriggerID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let (trigger, _) = try lookup(id, NamedKinds.trigger, for: account, .removeActionSetFromTrigger)
        guard trigger.actionSets.contains(actionSetID) else {
            throw HomeServiceError(.notFound, "action set \(actionSetID) is not in trigger \"\(trigger.name)\"")
        }
        detach(actionSetID, from: id, by: .account(account))
    }

    /// An enabled trigger as the scheduler needs it: when it fires next after `after`, and whose
    /// rights its action sets run with (the home's owner).
    public struct ScheduledTrigger: Sendable {
        public let id: TriggerID
        public let owner: AccountID
        public let actionSets: [ActionSetID]
        /// `nil` for a one-shot whose date has passed.
        public let nextFire: Int64?
    }

    /// Every enabled trigger with its next fire date after `after` (and after its last fire).
    public func enabledTriggers(after: Int64) -> [ScheduledTrigger] {
        triggers.values.filter(\.isEnabled).compactMap { trigger in
            guard let home = homes[trigger.home] else { return nil }
            let next = TriggerRules.nextFireDate(
                fireDate: trigger.fireDate,
                recurrence: trigger.recurrence,
                timeZone: home.timeZone,
                now: max(after, trigger.lastFireDate ?? Int64.min)
            )
            return ScheduledTrigger(id: trigger.id, owner: home.owner, actionSets: trigger.actionSets, nextFire: next)
        }
    }

    /// The store's clock (milliseconds since the Unix epoch): what trigger dates are compared with.
    public var currentTime: Int64 { now }

    /// Disables a one-shot trigger whose date passed while the server was not running: it never
    /// fires late (docs/API.md, "Timer triggers").
    public func disableMissedTrigger(_ id: TriggerID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        guard let trigger = triggers[id], trigger.isEnabled else { return }
        updateTrigger(id, in: trigger.home, by: .server) { $0.isEnabled = false }
    }

    /// The scheduler fired the trigger: records when; a one-shot trigger disables itself.
    /// - Throws: 2 for an unknown trigger; 48 for a disabled one (it cannot fire).
    public func recordFiring(of id: TriggerID, at time: Int64) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        guard let trigger = triggers[id] else { throw HomeServiceError(.notFound, "no such trigger \(id)") }
        guard trigger.isEnabled else {
            throw HomeServiceError(.operationNotSupported, "trigger \"\(trigger.name)\" is disabled and cannot fire")
        }
        updateTrigger(id, in: trigger.home, by: .server) { trigger in
            trigger.lastFireDate = time
            if trigger.recurrence == nil { trigger.isEnabled = false }
        }
    }

    /// Detaches an action set; a trigger that could no longer be enabled is disabled.
    func detach(_ actionSetID: ActionSetID, from id: TriggerID, by initiator: Initiator) {
        updateTrigger(id, in: triggers[id]!.home, by: initiator) { trigger in
            trigger.actionSets.removeAll { $0 == actionSetID }
        }
        disableTriggersThatCannotRun(in: triggers[id]!.home, by: initiator)
    }

    /// Disables every enabled trigger of the home that the enable rules would now refuse for its
    /// action sets (none left, or one without actions), with a trigger-updated event: an enabled
    /// trigger always satisfies the rules it was enabled under. Call after action sets lose actions.
    func disableTriggersThatCannotRun(in homeID: HomeID, by initiator: Initiator) {
        guard let home = homes[homeID] else { return }
        for id in home.triggers {
            guard let trigger = triggers[id], trigger.isEnabled else { continue }
            do throws(HomeServiceError) {
                try TriggerRules.checkHasActions(trigger, actionSets: trigger.actionSets.compactMap { actionSets[$0] })
            } catch {
                updateTrigger(id, in: homeID, by: initiator) { $0.isEnabled = false }
            }
        }
    }

    private func checkCanEnable(_ trigger: TimerTrigger) throws(HomeServiceError) {
        try TriggerRules.checkCanEnable(
            trigger,
            actionSets: trigger.actionSets.compactMap { actionSets[$0] },
            timeZone: homes[trigger.home]?.timeZone ?? "UTC",
            now: now
        )
    }

    private func updateTrigger(
        _ id: TriggerID,
        in home: HomeID,
        by initiator: Initiator,
        _ change: (inout TimerTrigger) -> Void
    ) {
        change(&triggers[id]!)
        touch(.trigger(id))
        emit(ChangeEvent(.triggerUpdated, object: id.raw, flag: triggers[id]!.isEnabled), in: home, by: initiator)
    }
}
