/// Timer triggers.
extension HomeStore {
    /// Adds a trigger, disabled.
    /// - Throws: the naming codes; 70, 28 for the date; 69, 42, 72 for the recurrence.
    public func addTrigger(
        named name: String,
        fireDate: Int64,
        recurrence: Int64? = nil,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> TimerTrigger {
        _ = try homeForAdding(name, NamedKinds.trigger, to: homeID, as: account)
        if let recurrence { try TriggerRules.checkRecurrence(recurrence) }
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
        submitPending()
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
        try checkAcceptingChanges()
        let (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .enableTrigger)
        guard trigger.isEnabled != enabled else { return }
        if enabled { try checkCanEnable(trigger) }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.isEnabled = enabled }
        submitPending()
    }

    /// - Throws: 70, 28; for an enabled trigger also 71.
    public func updateFireDate(of id: TriggerID, to fireDate: Int64, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        var (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .updateTriggerFireDate)
        try TriggerRules.checkFireDate(fireDate, recurrence: trigger.recurrence, now: now)
        trigger.fireDate = fireDate
        if trigger.isEnabled { try checkCanEnable(trigger) }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.fireDate = fireDate }
        submitPending()
    }

    /// Sets the recurrence in seconds, or with `nil` makes the trigger one-shot.
    /// - Throws: 69, 42, 72; 28 for a one-shot whose date has passed; for an enabled trigger also 71.
    public func updateRecurrence(
        of id: TriggerID,
        to recurrence: Int64?,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try checkAcceptingChanges()
        var (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .updateTriggerRecurrence)
        if let recurrence { try TriggerRules.checkRecurrence(recurrence) }
        if recurrence == nil && trigger.fireDate <= now {
            throw HomeServiceError(
                .fireDateInPast,
                "trigger \"\(trigger.name)\" cannot become one-shot: its fire date has passed"
            )
        }
        trigger.recurrence = recurrence
        if trigger.isEnabled { try checkCanEnable(trigger) }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.recurrence = recurrence }
        submitPending()
    }

    /// - Throws: 2 for an action set of another home; 1 if already attached.
    public func addActionSet(
        _ actionSetID: ActionSetID,
        toTrigger id: TriggerID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try checkAcceptingChanges()
        let (trigger, home) = try lookup(id, NamedKinds.trigger, for: account, .addActionSetToTrigger)
        let actionSet = try sameHome(actionSetID, in: actionSets, kind: "action set", home: \.home, as: home)
        guard !trigger.actionSets.contains(actionSetID) else {
            throw HomeServiceError(
                .alreadyExists,
                "action set \"\(actionSet.name)\" is already in trigger \"\(trigger.name)\""
            )
        }
        updateTrigger(id, in: home.id, by: .account(account)) { $0.actionSets.append(actionSetID) }
        submitPending()
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
        try checkAcceptingChanges()
        let (trigger, _) = try lookup(id, NamedKinds.trigger, for: account, .removeActionSetFromTrigger)
        guard trigger.actionSets.contains(actionSetID) else {
            throw HomeServiceError(.notFound, "action set \(actionSetID) is not in trigger \"\(trigger.name)\"")
        }
        detach(actionSetID, from: id, by: .account(account))
        submitPending()
    }

    /// The scheduler fired the trigger: records when; a one-shot trigger disables itself.
    public func recordFiring(of id: TriggerID, at time: Int64) throws(HomeServiceError) {
        try checkAcceptingChanges()
        guard let trigger = triggers[id] else { throw HomeServiceError(.notFound, "no such trigger \(id)") }
        updateTrigger(id, in: trigger.home, by: .server) { trigger in
            trigger.lastFireDate = time
            if trigger.recurrence == nil { trigger.isEnabled = false }
        }
        submitPending()
    }

    func detach(_ actionSetID: ActionSetID, from id: TriggerID, by initiator: Initiator) {
        updateTrigger(id, in: triggers[id]!.home, by: initiator) { trigger in
            trigger.actionSets.removeAll { $0 == actionSetID }
            if trigger.actionSets.isEmpty { trigger.isEnabled = false }
        }
    }

    private func checkCanEnable(_ trigger: TimerTrigger) throws(HomeServiceError) {
        try TriggerRules.checkCanEnable(trigger, actionSets: trigger.actionSets.compactMap { actionSets[$0] }, now: now)
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
