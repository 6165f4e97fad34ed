import HomeProto
import HomeService

extension HomeAPI {
    /// Runs an action set's planned writes through the accessories at once (in no particular order)
    /// and, when every one has been answered or has timed out, records the accepted writes and the
    /// execution date in one commit.
    /// - Parameter completion: nothing on success; 63 when every action failed, 64 with each
    ///   action's result in the items when some did; and the ticket to answer after.
    /// - Parameter initiator: who the changes are announced as (the account unless given).
    func execute(
        _ plan: HomeStore.ActionSetPlan,
        as account: AccountID,
        by initiator: Initiator? = nil,
        session: SessionID?,
        deadline: UInt64?,
        _ completion: @escaping (Result<Void, APIFailure>, CommitTicket) -> Void
    ) {
        let run = ActionSetRun(plan)
        let finish = { [store] in
            let id = plan.actionSet.id
            let (result, ticket) = store.write(from: session) { () throws(APIFailure) in
                try attempt(object: id.raw) { () throws(HomeServiceError) in
                    try store.finishExecution(of: id, accepted: run.accepted, as: account, by: initiator)
                }
                try run.check()
            }
            completion(result, ticket)
        }
        guard !plan.writes.isEmpty else {
            finish()
            return
        }
        for write in plan.writes {
            links.forward(
                .write(write.characteristic.id, write.value),
                to: write.characteristic.accessory,
                deadline: deadline
            ) { result in
                run.settle(write.action, write.characteristic.id, write.value, result)
                if run.isComplete { finish() }
            }
        }
    }
}

/// The answers gathered for one execution of an action set.
private final class ActionSetRun {
    let plan: HomeStore.ActionSetPlan
    private(set) var accepted: [(characteristic: CharacteristicID, value: CharacteristicValue)] = []
    private var errors: [ActionID: HomeServiceError]
    private var outstanding: Int

    init(_ plan: HomeStore.ActionSetPlan) {
        self.plan = plan
        errors = Dictionary(plan.refused.map { ($0.action, $0.error) }) { first, _ in first }
        outstanding = plan.writes.count
    }

    var isComplete: Bool { outstanding == 0 }

    func settle(
        _ action: ActionID,
        _ characteristic: CharacteristicID,
        _ value: CharacteristicValue,
        _ result: Result<CharacteristicValue?, HomeServiceError>
    ) {
        outstanding -= 1
        switch result {
        case .success: accepted.append((characteristic, value))
        case .failure(let error): errors[action] = error
        }
    }

    /// - Throws: 63 or 64 with every action's result, in the set's order.
    func check() throws(APIFailure) {
        let actions = plan.actionSet.actions
        let execution = HomeStore.ActionSetExecution(results: actions.map { ($0.id, errors[$0.id]) })
        guard let error = execution.error else { return }
        let items = actions.map { action in
            var item = Home_V1_ItemResult()
            item.objectID = ProtoEncoding.data(action.characteristic)
            if let failure = errors[action.id] {
                item.homekitCode = Int32(failure.code.rawValue)
                item.message = failure.message
            }
            return item
        }
        throw APIFailure(error, object: plan.actionSet.id.raw, items: items)
    }
}
