public import Wire

/// The server side of one connection's protocol, with no I/O: frames and clock ticks go in, actions
/// come out. ``ServerConnection`` performs the actions; tests drive the machine directly with an
/// injected clock (milliseconds on any monotonic scale).
///
/// It owns what the connection as a whole must enforce: the handshake, stream id order, the limit on
/// concurrent calls, which frames may arrive on which stream, keepalive, idle and handshake timeouts,
/// and the drain. What a call means (methods, messages, statuses) is ``ServerConnection``'s business.
///
/// It also holds each open call's `Call` (the server's ``ServerCall``), so that the one table that
/// says whether a stream is open also finds its call: a second table in the connection, kept in step
/// with this one, cost two more hashed insertions, removals and lookups per call.
public struct ConnectionStateMachine<Call> {
    public typealias Configuration = ConnectionConfiguration

    /// What the connection should do next.
    public enum Action: Equatable, Sendable {
        case none
        /// Send our preface and SETTINGS.
        case sendHandshake
        case send(Frame)
        /// A call was opened and admitted: look up its method and wait for its request.
        case startCall(StreamID, CallStart)
        /// A call was opened but may not run: answer it with this status at once.
        case refuseCall(StreamID, CallStatus)
        case deliverMessage(StreamID, payload: [UInt8], endStream: Bool)
        /// The peer cancelled the call: stop its work and send nothing more for it.
        case cancelCall(StreamID)
        case addCredit(StreamID, UInt32)
        /// Send `farewell` (if the peer can still read), cancel every call still open, and close.
        case close(CloseReason, farewell: [Frame])
    }

    /// What becomes of a CALL_START.
    public enum Admission: Equatable, Sendable {
        /// Open the call: look up its method and wait for its request.
        case admitted
        /// Answer the call with this status at once.
        case refused(CallStatus)
        /// The frame broke the protocol: perform this close.
        case violation(Action)
    }

    /// What becomes of a MESSAGE, CANCEL or CREDIT frame.
    public enum Routing {
        /// The call is open: act on the frame.
        case open(Call)
        /// The call has ended, or its id was skipped: drop the frame.
        case ignored
        /// The stream was never opened: perform this close.
        case violation(Action)
    }

    /// Where the connection is in its life.
    enum Phase: Equatable, Sendable {
        /// Accepted; waiting for the client's preface. Goes to `awaitingSettings`.
        case awaitingPreface
        /// Preface seen and answered; the client's first frame must be SETTINGS. Goes to `active`.
        case awaitingSettings
        /// Serving calls. Goes to `draining` or `closed`.
        case active
        /// GOAWAY sent: calls up to its stream id may finish until `deadline`, new ones are refused.
        /// Goes to `closed`.
        case draining(deadline: UInt64)
        /// A close action was returned; nothing more happens.
        case closed
    }

    public let configuration: Configuration
    private(set) var phase: Phase = .awaitingPreface
    /// The peer's announced limits, applying to what we send.
    public private(set) var peerSettings = PeerSettings()
    /// Calls admitted and not yet ended, by stream: an admitted call's value is stored by
    /// ``callOpened(_:on:)`` right after its admission.
    private var openStreams = StreamTable<Call>()
    /// The highest stream id the peer has opened (admitted or refused).
    public private(set) var highestStreamID = StreamID.connection
    /// The highest stream id admitted; sent in GOAWAY.
    public private(set) var lastAcceptedStreamID = StreamID.connection
    private let openedAt: UInt64
    private var lastReceivedAt: UInt64
    private var lastCallActivityAt: UInt64
    private var outstandingPing: (payload: UInt64, sentAt: UInt64)?
    private var pingsSent: UInt64 = 0
    /// The peer sent GOAWAY: it opens no more calls, and the connection ends once its calls do.
    private var peerIsGoingAway = false

    public init(configuration: Configuration, now: UInt64) {
        self.configuration = configuration
        openedAt = now
        lastReceivedAt = now
        lastCallActivityAt = now
    }

    public var isClosed: Bool { phase == .closed }
    /// Whether the handshake is done and frames are about calls (active or draining): then the
    /// connection may hand CALL_START and MESSAGE frames to ``callStartReceived(_:now:)`` and
    /// ``streamFrameReceived(on:kind:now:)`` instead of ``frameReceived(_:now:)``, without building
    /// a ``Frame`` or an ``Action`` for them (the bulk of a call's frames).
    public var isServingCalls: Bool {
        switch phase {
        case .active, .draining: true
        case .awaitingPreface, .awaitingSettings, .closed: false
        }
    }
    /// How many admitted calls have not ended.
    public var openStreamCount: Int { openStreams.count }
    /// Whether `streamID` is an admitted call that has not ended.
    public func isOpen(_ streamID: StreamID) -> Bool { openStreams.contains(streamID) }
    /// The open call on `streamID`, if any.
    public func call(on streamID: StreamID) -> Call? { openStreams[streamID] }
    public var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    // MARK: Events

    /// Bytes arrived from the peer: it is alive, even in the middle of a long frame (keepalive counts
    /// any byte, not whole frames, so a slow upload of one large frame is not cut off).
    public mutating func bytesReceived(now: UInt64) {
        lastReceivedAt = now
        outstandingPing = nil
    }

    /// A frame arrived from the peer.
    public mutating func frameReceived(_ frame: Frame, now: UInt64) -> Action {
        lastReceivedAt = now
        switch phase {
        case .closed:
            return .none
        case .awaitingPreface:
            guard case .preface = frame else { return violation("expected the preface") }
            phase = .awaitingSettings
            return .sendHandshake
        case .awaitingSettings:
            guard case .settings(let settings) = frame else { return violation("expected SETTINGS first") }
            peerSettings.apply(settings)
            phase = .active
            lastCallActivityAt = now
            return .none
        case .active, .draining:
            return streamFrameReceived(frame, now: now)
        }
    }

    private mutating func streamFrameReceived(_ frame: Frame, now: UInt64) -> Action {
        switch frame {
        case .preface:
            return violation("second preface")
        case .settings(let settings):
            peerSettings.apply(settings)
            return .none
        case .callStart(let streamID, let call):
            switch callStartReceived(streamID, now: now) {
            case .admitted: return .startCall(streamID, call)
            case .refused(let status): return .refuseCall(streamID, status)
            case .violation(let close): return close
            }
        case .message(let streamID, let payload, let endStream):
            switch streamFrameReceived(on: streamID, kind: .message, now: now) {
            case .open: return .deliverMessage(streamID, payload: payload, endStream: endStream)
            case .ignored: return .none
            case .violation(let close): return close
            }
        case .cancel(let streamID):
            switch streamFrameReceived(on: streamID, kind: .cancel, now: now) {
            case .open:
                // The call stays open until the connection ends it (``endCall(_:now:)``).
                lastCallActivityAt = now
                return .cancelCall(streamID)
            case .ignored: return .none
            case .violation(let close): return close
            }
        case .credit(let streamID, let increment):
            switch streamFrameReceived(on: streamID, kind: .credit, now: now) {
            case .open: return .addCredit(streamID, increment)
            case .ignored: return .none
            case .violation(let close): return close
            }
        case .callEnd(let streamID, _):
            return violation("CALL_END from a client on \(streamID)")
        case .ping(let payload):
            return .send(.pong(payload))
        case .pong(let payload):
            if outstandingPing?.payload == payload { outstandingPing = nil }
            return .none
        case .goAway:
            peerIsGoingAway = true
            // As when its last call ends (endCall): a peer that is leaving needs no GOAWAY back.
            return openStreams.isEmpty ? close(.peerClosed, farewell: []) : .none
        }
    }

    /// A CALL_START arrived on `streamID` (only while ``isServingCalls``). An admitted call must be
    /// given to ``callOpened(_:on:)``, or ended with ``endCall(_:now:)``, before the next frame; it
    /// then counts as open until ``endCall(_:now:)``.
    public mutating func callStartReceived(_ streamID: StreamID, now: UInt64) -> Admission {
        lastReceivedAt = now
        guard streamID > highestStreamID else {
            return .violation(violation("\(streamID) opened after \(highestStreamID): stream ids must increase"))
        }
        highestStreamID = streamID
        lastCallActivityAt = now
        if isDraining || peerIsGoingAway {
            return .refused(CallStatus(code: .unavailable, message: "server is draining", isRetryable: true))
        }
        guard openStreams.count < configuration.maxConcurrentStreams else {
            let message = "too many concurrent streams (limit \(configuration.maxConcurrentStreams))"
            return .refused(CallStatus(code: .resourceExhausted, message: message, isRetryable: true))
        }
        lastAcceptedStreamID = streamID
        return .admitted
    }

    /// Stores the call just admitted on `streamID` (by ``callStartReceived(_:now:)`` or as a
    /// ``Action/startCall(_:_:)``): it is open from now on.
    public mutating func callOpened(_ call: consuming Call, on streamID: StreamID) {
        openStreams.insert(call, for: streamID)
    }

    /// A MESSAGE, CANCEL or CREDIT frame arrived on `streamID` (only while ``isServingCalls``):
    /// open if the call is, ignored if it ended (the peer may not know yet) or its id was skipped,
    /// and a protocol violation if the stream was never opened.
    public mutating func streamFrameReceived(on streamID: StreamID, kind: FrameType, now: UInt64) -> Routing {
        lastReceivedAt = now
        if let call = openStreams[streamID] { return .open(call) }
        if streamID <= highestStreamID { return .ignored }
        return .violation(violation("\(kind.name) for \(streamID), which was never opened"))
    }

    /// The server finished the call on `streamID` (sent its CALL_END, or dropped it after a
    /// cancel): it is no longer open.
    /// - Returns: the call, or `nil` if it was not open (it had ended already); and what to do once
    ///   the call's last frame is written (close, when a drain waited for it).
    public mutating func endCall(_ streamID: StreamID, now: UInt64) -> (call: Call?, next: Action) {
        let call = openStreams.removeValue(for: streamID)
        lastCallActivityAt = now
        guard openStreams.isEmpty else { return (call, .none) }
        if isDraining || peerIsGoingAway {
            return (call, close(isDraining ? .drained : .peerClosed, farewell: []))
        }
        return (call, .none)
    }

    /// Takes every open call out of the machine, for a connection that is closing.
    public mutating func removeAllCalls() -> [Call] {
        defer { openStreams = StreamTable() }
        return openStreams.allValues
    }

    /// The bytes could not be decoded.
    public mutating func decodingFailed(_ error: WireError) -> Action {
        guard phase != .closed else { return .none }
        let reason = CloseReason.protocolError(error)
        switch error {
        case .badMagic:
            // Not our protocol: the peer would not understand a GOAWAY.
            phase = .closed
            return .close(reason, farewell: [])
        case .unsupportedVersion:
            // Tell the peer which version we speak, then why we leave.
            phase = .closed
            return .close(reason, farewell: [.preface(Preface()), goAway(for: reason)])
        default:
            return close(reason)
        }
    }

    /// Start a graceful drain: GOAWAY now, close when the open calls end or the grace period runs out.
    public mutating func drainRequested(now: UInt64) -> Action {
        switch phase {
        case .closed, .draining:
            return .none
        case .awaitingPreface, .awaitingSettings:
            return close(.drained, farewell: [])
        case .active:
            let goAway = goAway(for: .drained)
            if openStreams.isEmpty { return close(.drained) }
            phase = .draining(deadline: now + configuration.drainGracePeriodMilliseconds)
            return .send(goAway)
        }
    }

    /// Periodic check of every timeout; returns what is due.
    public mutating func timerFired(now: UInt64) -> Action {
        switch phase {
        case .closed:
            return .none
        case .awaitingPreface, .awaitingSettings:
            if now >= openedAt + configuration.handshakeTimeoutMilliseconds {
                return close(.handshakeTimeout, farewell: phase == .awaitingPreface ? [] : nil)
            }
            return .none
        case .draining(let deadline):
            if now >= deadline { return close(.drained, farewell: []) }
            return keepaliveDue(now: now)
        case .active:
            if let idle = configuration.idleTimeoutMilliseconds, openStreams.isEmpty,
                now >= lastCallActivityAt + idle
            {
                return close(.idleTimeout)
            }
            return keepaliveDue(now: now)
        }
    }

    private mutating func keepaliveDue(now: UInt64) -> Action {
        if let ping = outstandingPing {
            if now >= ping.sentAt + configuration.keepaliveTimeoutMilliseconds {
                return close(.keepaliveTimeout)
            }
            return .none
        }
        guard let interval = configuration.keepaliveIntervalMilliseconds, now >= lastReceivedAt + interval else {
            return .none
        }
        pingsSent += 1
        outstandingPing = (pingsSent, now)
        return .send(.ping(pingsSent))
    }

    // MARK: Helpers

    private mutating func violation(_ message: String) -> Action {
        close(.protocolViolation(message))
    }

    /// Closes, with a GOAWAY for `reason` unless `farewell` says otherwise.
    private mutating func close(_ reason: CloseReason, farewell: [Frame]? = nil) -> Action {
        // Before the handshake is answered the peer cannot parse frames, so send nothing.
        let canSendFrames = phase != .awaitingPreface
        phase = .closed
        let frames = farewell ?? [goAway(for: reason)]
        return .close(reason, farewell: canSendFrames ? frames : [])
    }

    private func goAway(for reason: CloseReason) -> Frame {
        .goAway(reason.goAway(lastStreamID: lastAcceptedStreamID))
    }
}

/// What the peer announced in SETTINGS, with the protocol's defaults until it does.
public struct PeerSettings: Hashable, Sendable {
    public var maxFrameSize = WireLimits.defaultMaxFrameSize
    public var initialStreamCredit: UInt32 = 64

    mutating func apply(_ settings: Settings) {
        for setting in settings.entries {
            switch setting.id {
            case .maxFrameSize: maxFrameSize = Int(setting.value)
            case .initialStreamCredit: initialStreamCredit = setting.value
            default: break
            }
        }
    }
}

extension ConnectionStateMachine: Sendable where Call: Sendable {}
extension ConnectionStateMachine.Routing: Equatable where Call: Equatable {}
extension ConnectionStateMachine.Routing: Sendable where Call: Sendable {}

/// The limits and timeouts of one connection (``ConnectionStateMachine``).
public struct ConnectionConfiguration: Sendable {
    public var maxConcurrentStreams: Int
    /// Ping after this long without receiving anything; `nil` disables keepalive.
    public var keepaliveIntervalMilliseconds: UInt64?
    /// Close if the PONG has not arrived this long after the PING.
    public var keepaliveTimeoutMilliseconds: UInt64
    /// Close after this long with no call in flight; `nil` disables.
    public var idleTimeoutMilliseconds: UInt64?
    /// Close unless the preface and SETTINGS arrive within this long of accepting.
    public var handshakeTimeoutMilliseconds: UInt64
    /// How long in-flight calls may run after a drain starts.
    public var drainGracePeriodMilliseconds: UInt64

    public init(
        maxConcurrentStreams: Int = 100,
        keepaliveIntervalMilliseconds: UInt64? = 30_000,
        keepaliveTimeoutMilliseconds: UInt64 = 10_000,
        idleTimeoutMilliseconds: UInt64? = 300_000,
        handshakeTimeoutMilliseconds: UInt64 = 10_000,
        drainGracePeriodMilliseconds: UInt64 = 10_000
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.keepaliveIntervalMilliseconds = keepaliveIntervalMilliseconds
        self.keepaliveTimeoutMilliseconds = keepaliveTimeoutMilliseconds
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.handshakeTimeoutMilliseconds = handshakeTimeoutMilliseconds
        self.drainGracePeriodMilliseconds = drainGracePeriodMilliseconds
    }
}
