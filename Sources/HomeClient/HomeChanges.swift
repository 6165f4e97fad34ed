public import Foundation
public import HomeProto
import Logging
import RPCClient
import SwiftProtobuf
import Wire

/// One change event (`home.v1.Event`): its home, revision, time, initiator and a typed payload.
public typealias HomeEvent = Home_V1_Event
/// An event kind a subscription can ask for.
public typealias HomeEventKind = Home_V1_EventKind

/// What a change stream follows.
public struct ChangeOptions: Sendable {
    /// The homes to follow; empty: every home of the account, including ones it joins later.
    public var homes: [UUID]
    /// The kinds to receive; empty: every kind.
    public var kinds: [HomeEventKind]
    /// Value events for these characteristics, beside those the account enabled notifications on.
    public var characteristics: [UUID]
    /// Start each home with a `HomeSnapshot` of its full state.
    public var snapshot: Bool
    /// Also receive the changes this client made itself.
    public var includeOwnChanges: Bool
    /// Where to continue per home (the last revision an earlier stream delivered).
    public var resumeFrom: [UUID: UInt64]

    /// Options as the properties above describe them; by default, every home of the account and
    /// every event kind, from now on.
    public init(
        homes: [UUID] = [],
        kinds: [HomeEventKind] = [],
        characteristics: [UUID] = [],
        snapshot: Bool = false,
        includeOwnChanges: Bool = false,
        resumeFrom: [UUID: UInt64] = [:]
    ) {
        self.homes = homes
        self.kinds = kinds
        self.characteristics = characteristics
        self.snapshot = snapshot
        self.includeOwnChanges = includeOwnChanges
        self.resumeFrom = resumeFrom
    }
}

extension HomeClient {
    /// The changes of the account's homes, as they are committed, for as long as it is iterated.
    ///
    /// ```swift
    /// for try await event in client.changes(ChangeOptions(homes: [homeID], snapshot: true)) {
    ///     switch event.payload {
    ///     case .snapshot(let snapshot)?: model = snapshot.home
    ///     case .roomAdded(let added)?: model.rooms.append(added.room)
    ///     ...
    ///     }
    /// }
    /// ```
    ///
    /// When the connection drops or the server restarts, it reconnects with backoff and resumes
    /// after the last revision it delivered in each home, so every change arrives exactly once, or a
    /// `Resync` with the home's whole state says that the missed ones are no longer retained.
    /// Without `snapshot`, it first reads each home's revision so that the stream starts exactly
    /// there. It ends (returns `nil`) when every named home is gone, and throws a failure that
    /// retrying cannot fix (a home the account cannot see, a revoked token).
    ///
    /// Changes this client made on an earlier connection that were not yet delivered when it
    /// dropped count as another client's after the reconnect, and are delivered.
    public nonisolated func changes(_ options: ChangeOptions = ChangeOptions()) -> HomeChanges {
        HomeChanges(client: self, options: options)
    }
}

/// What ``HomeChanges/includingReconnects()`` delivers: the events, and where the stream
/// reconnected between them.
public enum HomeChange: Sendable {
    /// A change event, as ``HomeClient/changes(_:)`` delivers it.
    case event(HomeEvent)
    /// The stream's connection failed and the stream is open again on a new one, resuming after
    /// these revisions (the last delivered in each home): the events that follow are the ones
    /// missed meanwhile, none twice, or a `Resync` with a home's whole state when they are no
    /// longer retained.
    case reconnected(resumingAfter: [UUID: UInt64])
}

/// The sequence ``HomeClient/changes(_:)`` returns. Iterate it once.
public struct HomeChanges: AsyncSequence, Sendable {
    public typealias Element = HomeEvent

    let client: HomeClient
    let options: ChangeOptions

    public func makeAsyncIterator() -> Iterator {
        Iterator(follower: ChangeFollower(client: client, options: options))
    }

    /// The same stream with a ``HomeChange/reconnected(resumingAfter:)`` marker where it reconnected:
    /// for a view that shows the gap, or a service that logs it beside the events.
    public func includingReconnects() -> HomeChangesIncludingReconnects {
        HomeChangesIncludingReconnects(client: client, options: options)
    }

    /// Delivers the stream's events, one per iteration of the sequence.
    public struct Iterator: AsyncIteratorProtocol {
        var follower: ChangeFollower

        /// The next event; `nil` once the stream ended because every named home is gone or the
        /// client was closed.
        /// - Throws: ``HomeClientError`` for a failure that reconnecting cannot fix, or
        ///   `CancellationError` when the task is cancelled; nothing else.
        public mutating func next() async throws -> HomeEvent? {
            while let change = try await follower.next() {
                if case .event(let event) = change { return event }
            }
            return nil
        }
    }
}

/// The sequence ``HomeChanges/includingReconnects()`` returns. Iterate it once.
public struct HomeChangesIncludingReconnects: AsyncSequence, Sendable {
    public typealias Element = HomeChange

    let client: HomeClient
    let options: ChangeOptions

    public func makeAsyncIterator() -> Iterator {
        Iterator(follower: ChangeFollower(client: client, options: options))
    }

    /// Delivers the stream's events and reconnects, one per iteration of the sequence.
    public struct Iterator: AsyncIteratorProtocol {
        var follower: ChangeFollower

        /// The next event or reconnect; `nil` once the stream ended because every named home is
        /// gone or the client was closed.
        /// - Throws: ``HomeClientError`` for a failure that reconnecting cannot fix, or
        ///   `CancellationError` when the task is cancelled; nothing else.
        public mutating func next() async throws -> HomeChange? {
            try await follower.next()
        }
    }
}

/// A change stream's state across its connections: where each home is, which homes are still
/// followed, when to reconnect.
struct ChangeFollower {
    let client: HomeClient
    let options: ChangeOptions
    /// The last revision delivered per home: where a reconnect resumes.
    private var revisions: [UUID: UInt64]
    /// The named homes still followed (a home left or removed is not named again).
    private var homes: [UUID]
    private var stream: ResponseStream.AsyncIterator?
    private var failures = 0
    /// Whether the stream failed and is being opened again (a ``HomeChange/reconnected(resumingAfter:)`` is due).
    private var reconnecting = false
    private var readStartingRevisions = false
    /// ``HomeClient/closings`` when the stream was first opened: a close since ends it.
    private var closings: Int?

    init(client: HomeClient, options: ChangeOptions) {
        self.client = client
        self.options = options
        self.revisions = options.resumeFrom
        self.homes = options.homes
    }

    mutating func next() async throws -> HomeChange? {
        while true {
            try Task.checkCancellation()
            do {
                if stream == nil {
                    let current = await client.closings
                    if let closings, closings != current { return nil }
                    closings = current
                    guard let opened = try await open() else { return nil }
                    stream = opened
                    if reconnecting {
                        reconnecting = false
                        client.logger.info(
                            "change stream reconnected",
                            metadata: ["homerpc.resuming_after": "\(revisions)"]
                        )
                        return .reconnected(resumingAfter: revisions)
                    }
                }
                guard let bytes = try await stream!.next() else { return nil }
                failures = 0
                let event = try ProtoCall.decode(bytes, as: HomeEvent.self)
                if accept(event) { return .event(event) }
            } catch let error as RPCError {
                // A cancelled task's stream ends with CANCELLED: it is the cancellation.
                try Task.checkCancellation()
                if await wasClosed() { return nil }
                try await recover(from: HomeClientError(error))
            } catch let error as HomeClientError {
                try Task.checkCancellation()
                if await wasClosed() { return nil }
                try await recover(from: error)
            }
        }
    }

    /// Whether the client was closed since the stream was opened (its failure is the close's).
    private func wasClosed() async -> Bool {
        guard let closings else { return false }
        return await client.closings != closings
    }

    /// Waits before reconnecting after a retryable failure; rethrows any other.
    private mutating func recover(from error: HomeClientError) async throws {
        stream = nil
        guard error.status == .unavailable, error.homeKitCode == nil else { throw error }
        await client.connectionFailed(error)
        reconnecting = true
        if error.usedUpStreamIDs { return }  // nothing failed: open it again at once
        failures += 1
        // The client's backoff, jittered, without its limit on attempts: a stream follows until
        // it is closed or cancelled.
        let wait = client.retryPolicy.backoff(beforeRetry: failures)
        client.logger.info(
            "change stream's connection failed; reconnecting",
            metadata: ["homerpc.error": "\(error)", "homerpc.wait": "\(wait)"]
        )
        try await Task.sleep(for: wait)
    }

    /// The stream, or `nil` when no named home is left to follow.
    private mutating func open() async throws(HomeClientError) -> ResponseStream.AsyncIterator? {
        if !options.snapshot && !readStartingRevisions {
            // Start exactly at each home's committed revision, so a reconnect before the first
            // event of a home still resumes without a gap.
            for home in try await client.listHomes() {
                let id = home.id.uuid
                guard options.homes.isEmpty || homes.contains(id) else { continue }
                if revisions[id] == nil { revisions[id] = home.revision }
            }
            readStartingRevisions = true
        }
        if !options.homes.isEmpty && homes.isEmpty { return nil }
        var request = Home_V1_SubscribeRequest()
        request.homeIds = homes.map(\.data)
        request.kinds = options.kinds
        request.characteristicIds = options.characteristics.map(\.data)
        request.snapshot = options.snapshot
        request.includeOwnChanges = options.includeOwnChanges
        request.resumeFrom = revisions.sorted { $0.key.uuidString < $1.key.uuidString }.map { home, revision in
            Home_V1_ResumePoint.with {
                $0.homeID = home.data
                $0.revision = revision
            }
        }
        return try await client.openStream(homeService + "Subscribe", request).makeAsyncIterator()
    }

    /// Records the event's revision; drops one already delivered (a replay overlapping what
    /// arrived before a reconnect).
    private mutating func accept(_ event: HomeEvent) -> Bool {
        guard let home = UUID(data: event.homeID) else { return true }
        switch event.payload {
        case .snapshot?, .resync?, .homeAdded?:
            revisions[home] = event.revision
            return true
        case .homeRemoved?:
            leave(home)
            return true
        case .userRemoved(let removed)? where removed.subscriber:
            leave(home)
            return true
        default:
            if let last = revisions[home], event.revision <= last { return false }
            revisions[home] = event.revision
            return true
        }
    }

    /// The account is no longer in `home`: a reconnect must not name it.
    private mutating func leave(_ home: UUID) {
        revisions[home] = nil
        homes.removeAll { $0 == home }
    }
}
