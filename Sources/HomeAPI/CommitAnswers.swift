import HomeService
import RPCServer
import Wire

/// Answers that wait for their change to be durable. Every mutation made before the store hands
/// its batch to the writer waits for the same commit, so the answers are gathered by ticket: each
/// ticket's group waits for the commit once, and its calls are all answered when it comes.
/// (A closure per call, holding the call and its answer, cost every durable write an allocation
/// and its release, and the store a waiter to queue and drop; with the connections' reuse of
/// ended calls, this took 1,400 instructions off a store write at 50 connections of 16 calls.)
final class CommitAnswers {
    private let store: HomeStore
    /// Where a written answer's array goes, to be encoded into again.
    private let buffers: AnswerBuffers
    /// The group of the latest ticket (once answered, the next answer starts a group of its own).
    private var gathering: Group?
    /// How many answers the last group gathered: the next reserves room for as many at once.
    private var lastGroupSize = 0

    init(store: HomeStore, buffers: AnswerBuffers) {
        self.store = store
        self.buffers = buffers
    }

    /// Answers `call` with `outcome` once `ticket` is durable; a store that failed to commit
    /// answers INTERNAL with 52 and acknowledges nothing.
    func answer(_ call: consuming ServerCall, with outcome: consuming Outcome, after ticket: CommitTicket) {
        if let gathering, gathering.ticket == ticket, !gathering.isAnswered {
            gathering.add(Answer(call: call, outcome: outcome), expecting: lastGroupSize)
            return
        }
        if let gathering { lastGroupSize = gathering.count }
        let group = Group(ticket, first: Answer(call: call, outcome: outcome), buffers: buffers)
        gathering = group
        store.whenCommitted(ticket, notify: group)
    }

    /// The answers waiting for one ticket: the first held in place, so that a commit of one write
    /// allocates nothing more than the group.
    private struct Answer {
        let call: ServerCall
        let outcome: Outcome

        /// The call and the outcome's kind, moved out (the response's array then has no other
        /// holder, and can be kept).
        consuming func parts() -> (ServerCall, Outcome.Kind) { (call, outcome.kind) }
    }

    private final class Group: CommitObserver {
        let ticket: CommitTicket
        private let buffers: AnswerBuffers
        private var first: Answer?
        private var others: [Answer] = []
        /// How many answers the group gathered.
        private(set) var count = 1
        private(set) var isAnswered = false

        init(_ ticket: CommitTicket, first: consuming Answer, buffers: AnswerBuffers) {
            self.ticket = ticket
            self.first = first
            self.buffers = buffers
        }

        /// Adds an answer, making room for `expected` in all at the first.
        func add(_ answer: consuming Answer, expecting expected: Int) {
            if others.isEmpty { others.reserveCapacity(max(1, expected - 1)) }
            others.append(answer)
            count += 1
        }

        func committed(_ failure: StoreError?) {
            isAnswered = true
            if let first = first.take() { answer(first, failure) }
            // Moved out one at a time, the last first: read in place, the answers were released
            // with the array by the runtime's generic walk over its elements (400 instructions a
            // write), and reversing them first cost 150. Their order does not matter: a commit is
            // answered inside one output batch, so every connection writes its answers at once.
            var others = others
            self.others = []
            while let answer = others.popLast() { self.answer(answer, failure) }
        }

        private func answer(_ answer: consuming Answer, _ failure: StoreError?) {
            let (call, kind) = answer.parts()
            if let failure {
                call.fail(HomeKitStatus.uncommitted(failure))
                return
            }
            switch consume kind {
            case .success(let bytes):
                call.respond(bytes)
                buffers.giveBack(bytes)
            case .failure(let status):
                call.fail(status)
            }
        }
    }
}
