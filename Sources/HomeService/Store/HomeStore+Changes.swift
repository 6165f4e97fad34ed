/// Replaying a home's changes for a subscriber that resumes from a revision.
extension HomeStore {
    /// The answer to "what changed in this home after revision N?".
    public enum ChangeReplay: Sendable, Equatable {
        /// Exactly the changes after N, in revision order (empty when N is current).
        case changes([HomeChange])
        /// N is no longer retained (or was never issued): reload the home, then follow from
        /// `currentRevision`.
        case resyncNeeded(currentRevision: UInt64)
    }

    /// Changes of the home after `revision`, for a member.
    public func changes(
        in homeID: HomeID,
        after revision: UInt64,
        as account: AccountID
    ) throws(HomeServiceError)
        -> ChangeReplay
    {
        _ = try home(homeID, for: account, .observeChanges)
        return committedChanges(in: homeID, after: revision)!
    }

    /// Changes of the home after `revision` whoever asks, or `nil` once the home is removed: for a
    /// stream whose account was checked as a member at `revision` and may have left since. Its
    /// departure is among the changes (or is still being committed); the stream delivers up to it
    /// and stops there.
    public func committedChanges(in homeID: HomeID, after revision: UInt64) -> ChangeReplay? {
        switch logs[homeID]?.replay(after: revision, now: UInt64(max(0, now))) {
        case .entries(let entries)?: return .changes(entries.map(\.event))
        case .resyncNeeded(let current)?: return .resyncNeeded(currentRevision: current)
        case nil: return nil
        }
    }
}
