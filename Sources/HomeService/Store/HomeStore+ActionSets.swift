/// Action sets, their actions, and executing them.
extension HomeStore {
    /// What executing an action set did: each action's result, in the set's order.
    public struct ActionSetExecution: Sendable {
        public let results: [(action: ActionID, error: HomeServiceError?)]

        public init(results: [(action: ActionID, error: HomeServiceError?)]) {
            self.results = results
        }

        /// 63 when every write failed, 64 (with the per-action results) when some did; `nil` on success.
        public var error: HomeServiceError? {
            let failed = results.filter { $0.error != nil }.count
            if failed == 0 { return nil }
            if failed == results.count {
                return HomeServiceError(.actionSetExecutionFailed, "every action of the set failed")
            }
            return HomeServiceError(
                .actionSetExecutionPartialSuccess,
                "\(failed) of \(results.count) actions failed"
            )
        }
    }

    public func addActionSet(
        named name: String,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError)
        -> ActionSet
    {
        try beginMutation()
        defer { endMutation() }
        _ = try homeForAdding(name, NamedKinds.actionSet, to: homeID, as: account)
        let id = insertActionSet(named: name, kind: .userDefined, in: homeID, announcedBy: account)
        return actionSets[id]!
    }

    @discardableResult
    func insertActionSet(
        named name: String,
        kind: ActionSet.Kind,
        in homeID: HomeID,
        announcedBy account: AccountID?
    )
        -> ActionSetID
    {
        let actionSet = ActionSet(
            id: .random(),
            home: homeID,
            name: name,
            kind: kind,
            actions: [],
            lastExecutionDate: nil,
            sequence: nextSequenceNumber()
        )
        insert(actionSet, NamedKinds.actionSet, announcedBy: account)
        return actionSet.id
    }

    /// Removes a user-defined action set, and takes it out of every trigger.
    /// - Throws: 83 for a built-in set.
    public func removeActionSet(_ id: ActionSetID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (actionSet, home) = try lookup(id, NamedKinds.actionSet, for: account, .removeActionSet)
        guard !actionSet.isBuiltIn else {
            throw HomeServiceError(
                .cannotRemoveBuiltinActionSet,
                "action set \"\(actionSet.name)\" is built in and cannot be removed"
            )
        }
        for triggerID in home.triggers where triggers[triggerID]!.actionSets.contains(id) {
            detach(id, from: triggerID, by: .account(account))
        }
        deleteActionSet(id, announcedBy: .account(account))
    }

    func deleteActionSet(_ id: ActionSetID, announcedBy initiator: Initiator?) {
        for action in actionSets[id]?.actions ?? [] { actionOwners[action.id] = nil }
        delete(id, NamedKinds.actionSet, announcedBy: initiator)
    }

    public func renameActionSet(_ id: ActionSetID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try rename(id, NamedKinds.actionSet, to: name, as: account)
    }

    /// Adds a characteristic write to the set.
    /// - Throws: 30 if the action is in another set; 1 if it (or another write of the same
    ///   characteristic) is already in this one; 11 or 2 for a characteristic of another home; 5 for
    ///   a read-only characteristic; the value rules; 49 past the set's action limit.
    public func addAction(
        _ action: CharacteristicWriteAction,
        to id: ActionSetID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let homeID = try locate(id, NamedKinds.actionSet, for: account, .addAction)
        let actionSet = actionSets[id]!
        if let owner = actionOwners[action.id] {
            throw owner == id
                ? HomeServiceError(.alreadyExists, "the action is already in action set \"\(actionSet.name)\"")
                : HomeServiceError(.actionInAnotherActionSet, "the action already belongs to another action set")
        }
        let target = try checkTarget(action.characteristic, action.targetValue, in: homeID, for: account)
        try ObjectLimits.check(
            actionSet.actions.count,
            against: limits.actionsPerActionSet,
            "the actions of action set \"\(actionSet.name)\""
        )
        if actionSet.actions.contains(where: { $0.characteristic == action.characteristic }) {
            throw HomeServiceError(
                .alreadyExists,
                "action set \"\(actionSet.name)\" already writes \(target.displayName)"
            )
        }
        actionSets[id]!.actions.append(action)
        actionOwners[action.id] = id
        touch(.actionSet(id))
        emit(ChangeEvent(.actionSetActionsUpdated, object: id.raw), in: homeID, by: .account(account))
    }

    /// Removes an action; an enabled trigger left with an empty action set is disabled.
    /// - Throws: 2 if the action is not in the set.
    public func removeAction(_ actionID: ActionID, from id: ActionSetID, as account: AccountID) throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let (actionSet, home) = try lookup(id, NamedKinds.actionSet, for: account, .removeAction)
        guard actionOwners[actionID] == id else {
            throw HomeServiceError(.notFound, "action \(actionID) is not in action set \"\(actionSet.name)\"")
        }
        actionSets[id]!.actions.removeAll { $0.id == actionID }
        actionOwners[actionID] = nil
        touch(.actionSet(id))
        emit(ChangeEvent(.actionSetActionsUpdated, object: id.raw), in: home.id, by: .account(account))
        disableTriggersThatCannotRun(in: home.id, by: .account(account))
    }

    /// Changes what an action writes; returns the action set as changed.
    /// - Throws: 2 if the action is not in the set; ``checkTarget(_:_:in:for:)``'s codes.
    @discardableResult
    public func updateTargetValue(
        of actionID: ActionID,
        in id: ActionSetID,
        to value: CharacteristicValue,
        as account: AccountID
    ) throws(HomeServiceError) -> ActionSet {
        try beginMutation()
        defer { endMutation() }
        let homeID = try locate(id, NamedKinds.actionSet, for: account, .updateActionTargetValue)
        return try updateTargetValue(of: actionID, in: id, home: homeID, to: value, as: account) { $0 }
    }

    /// Changes what an action writes, and answers with `answer` of the action set as changed, read
    /// where it lies (the store write the benchmarks measure: the set's copies in and out, and
    /// the subscript's allocated frame, were a sixth of the call), for a set the caller has just
    /// checked to be in the home a request named: what the check found stands for the store's own
    /// lookup of the set and of the caller's role (three of a store write's hash lookups).
    /// - Throws: 17 for a guest; the codes above.
    public func updateTargetValue<Answer>(
        of actionID: ActionID,
        in checked: borrowing CheckedObject<IDKind.ActionSet>,
        to value: CharacteristicValue,
        as account: AccountID,
        answer: (ActionSet) -> Answer
    ) throws(HomeServiceError) -> Answer {
        try beginMutation()
        defer { endMutation() }
        let (id, homeID) = (checked.id, checked.home)
        try AccessRules.authorize(.updateActionTargetValue, role: checked.role, homeName: homes[homeID]?.name ?? "")
        return try updateTargetValue(of: actionID, in: id, home: homeID, to: value, as: account, answer: answer)
    }

    /// The update itself, once the set is found in `homeID` and the caller may change it.
    private func updateTargetValue<Answer>(
        of actionID: ActionID,
        in id: ActionSetID,
        home homeID: HomeID,
        to value: CharacteristicValue,
        as account: AccountID,
        answer: (ActionSet) -> Answer
    ) throws(HomeServiceError) -> Answer {
        // Through `update`, not `read`: an in-out access sees the set where it lies, where `read`
        // hands a closure the compiler does not inline a copy (two, through `Optional.map`). Found
        // once: the check between the look and the change adds and removes no action set.
        let slot = actionSets.slot(of: id)
        guard let slot,
            case let (index, characteristic)? = actionSets.update(
                at: slot,
                { set in set.actions.firstIndex { $0.id == actionID }.map { ($0, set.actions[$0].characteristic) } }
            )
        else {
            let name = actionSets.read(id, \.name) ?? ""
            throw HomeServiceError(.notFound, "action \(actionID) is not in action set \"\(name)\"")
        }
        _ = try checkTarget(characteristic, value, in: homeID, for: account)
        let answered = actionSets.update(at: slot) { set in
            set.actions[index].targetValue = value
            return answer(set)
        }
        touch(.actionSet(id))
        emit(ChangeEvent(.actionSetActionsUpdated, object: id.raw), in: homeID, by: .account(account))
        return answered
    }

    /// An execution about to happen: the writes to forward, and the actions that failed their checks.
    public struct ActionSetPlan: Sendable {
        public let actionSet: ActionSet
        /// Writes that passed every check, for the accessories to take.
        public let writes: [(action: ActionID, characteristic: Characteristic, value: CharacteristicValue)]
        /// Actions refused before anything was sent (61, 4, 88, or an invalid target).
        public let refused: [(action: ActionID, error: HomeServiceError)]
    }

    /// Starts executing an action set: checks it and each of its actions, and marks it executing
    /// until ``finishExecution(of:accepted:as:)``. Nothing is written yet.
    /// - Throws: 2; 25 for a set without actions; 65 while it is executing.
    public func planExecution(of id: ActionSetID, as account: AccountID) throws(HomeServiceError) -> ActionSetPlan {
        let (actionSet, home) = try lookup(id, NamedKinds.actionSet, for: account, .executeActionSet)
        guard !actionSet.actions.isEmpty else {
            throw HomeServiceError(.noActionsInActionSet, "action set \"\(actionSet.name)\" has no actions")
        }
        guard !actionSet.isExecuting else {
            throw HomeServiceError(
                .actionSetExecutionInProgress,
                "action set \"\(actionSet.name)\" is executing; try again when it has finished"
            )
        }
        var writes: [(action: ActionID, characteristic: Characteristic, value: CharacteristicValue)] = []
        var refused: [(action: ActionID, error: HomeServiceError)] = []
        for action in actionSet.actions {
            do throws(HomeServiceError) {
                _ = try checkTarget(action.characteristic, action.targetValue, in: home.id, for: account)
                let characteristic = characteristics[action.characteristic]!
                try checkAvailable(characteristic.accessory)
                writes.append((action.id, characteristic, action.targetValue))
            } catch {
                refused.append((action.id, error))
            }
        }
        actionSets[id]!.isExecuting = true
        return ActionSetPlan(actionSet: actionSet, writes: writes, refused: refused)
    }

    /// Ends an execution: records the writes the accessories accepted and the execution date.
    /// - Parameter initiator: who the value changes are announced as (the caller's account unless
    ///   given: a timer trigger's run is the server's).
    public func finishExecution(
        of id: ActionSetID,
        accepted: [(characteristic: CharacteristicID, value: CharacteristicValue)],
        as account: AccountID,
        by initiator: Initiator? = nil
    ) throws(HomeServiceError) {
        actionSets[id]?.isExecuting = false
        try beginMutation()
        defer { endMutation() }
        for (characteristicID, value) in accepted {
            // A characteristic removed while its write was out is simply gone.
            guard let characteristic = characteristics[characteristicID] else { continue }
            record(value, for: characteristic, by: initiator ?? .account(account))
        }
        guard actionSets[id] != nil else { return }
        actionSets[id]!.lastExecutionDate = now
        touch(.actionSet(id))
    }

    /// Executes every action of the set with each accessory taking its write at once (no accessory
    /// link: for tools and tests of the store) and reports each one's result.
    /// - Throws: 25 for a set without actions. Per-action failures are in the result, with 63 or 64.
    public func executeActionSet(
        _ id: ActionSetID,
        as account: AccountID
    ) throws(HomeServiceError)
        -> ActionSetExecution
    {
        try checkAcceptingChanges()
        let plan = try planExecution(of: id, as: account)
        try finishExecution(of: id, accepted: plan.writes.map { ($0.characteristic.id, $0.value) }, as: account)
        let failures = Dictionary(plan.refused.map { ($0.action, $0.error) }) { first, _ in first }
        return ActionSetExecution(results: plan.actionSet.actions.map { ($0.id, failures[$0.id]) })
    }

    /// Checks an action's target: a characteristic of home `homeID`, writable, and `value` valid
    /// for it; returns its kind. The characteristic is read where it lies (``sameHome(_:in:kind:home:as:for:)``
    /// copies the table and the characteristic, three retains and releases each).
    /// - Throws: 11 or 2 for a characteristic of another home (``notInHome(_:of:kind:home:for:)``);
    ///   5 for a read-only one; the value rules' codes.
    private func checkTarget(
        _ id: CharacteristicID,
        _ value: CharacteristicValue,
        in homeID: HomeID,
        for account: AccountID
    ) throws(HomeServiceError) -> CharacteristicKind {
        let found = characteristics.read(id) { ($0.home, $0.kind) }
        guard case let (home, kind)? = found, home == homeID else {
            throw notInHome(id, of: found?.0, kind: "characteristic", home: homeID, for: account)
        }
        try checkWritable(kind, value, accessory: nil)
        return kind
    }
}
