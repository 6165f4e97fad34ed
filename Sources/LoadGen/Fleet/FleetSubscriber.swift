import Foundation
import HomeProto
import RPCClient
import SwiftProtobuf
import UV
import Wire

/// One home's subscriber in the fleet: a connection with a `Subscribe` stream of the counters' value
/// events. It starts from a snapshot; when the stream ends without being asked to (the server went
/// away), it subscribes again after a growing delay from the last revision it received, so the
/// events it missed meanwhile still come (or a Resync, when the server no longer has them).
final class FleetSubscriber {
    let home: Data
    private let characteristics: [Data]
    private let endpoint: Endpoint
    private let configuration: ClientConnection.Configuration
    private let loop: EventLoop
    private let authorization: [MetadataEntry]
    private let retries: RetrySchedule
    private var connection: ClientConnection?
    /// The revision of the last message received: where a new stream resumes.
    private var revision: UInt64?
    private var attempts = 0
    private var isClosed = false

    /// Each value event of the stream.
    var onEvent: ((ValueEventReader.ValueUpdate) -> Void)?
    /// The stream ended without `close`; a new one is on its way.
    var onEnded: ((RPCError?) -> Void)?
    /// A new stream delivered its first message: the missed events, or a Resync.
    var onResumed: (() -> Void)?
    private(set) var resyncs = 0

    init(
        home: Data,
        characteristics: [Data],
        endpoint: Endpoint,
        configuration: ClientConnection.Configuration,
        loop: EventLoop,
        authorization: [MetadataEntry],
        retries: RetrySchedule
    ) {
        self.configuration = configuration
        self.home = home
        self.characteristics = characteristics
        self.endpoint = endpoint
        self.loop = loop
        self.authorization = authorization
        self.retries = retries
    }

    /// Connects and subscribes with a snapshot; `ready` runs once the snapshot arrived (nil) or
    /// the attempt failed.
    func open(_ ready: @escaping (RPCError?) -> Void) {
        subscribe(ready: ready)
    }

    private func subscribe(ready: ((RPCError?) -> Void)?) {
        var request = Home_V1_SubscribeRequest()
        request.homeIds = [home]
        request.kinds = [.characteristicValueUpdated]
        request.characteristicIds = characteristics
        if let revision {
            var point = Home_V1_ResumePoint()
            point.homeID = home
            point.revision = revision
            request.resumeFrom = [point]
        } else {
            request.snapshot = true
        }
        let bytes = (try? request.serializedBytes()) ?? []
        do {
            try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { [self] result in
                guard !isClosed else {
                    if case .success(let client) = result { client.close() }
                    return
                }
                switch result {
                case .failure(let error):
                    if let ready { return ready(error) }
                    retry()
                case .success(let client):
                    connection = client
                    stream(bytes, on: client, ready: ready)
                }
            }
        } catch {
            let failure = RPCError(code: .unavailable, message: "connect: \(error)")
            if let ready { return ready(failure) }
            retry()
        }
    }

    private func stream(_ request: [UInt8], on client: ClientConnection, ready: ((RPCError?) -> Void)?) {
        var first = true
        client.serverStream(
            "home.v1.HomeService/Subscribe",
            request: request,
            metadata: authorization,
            // An earlier connection's stream (closed when subscribing again) is not news.
            onMessage: { [weak self, weak client] bytes in
                guard let self, let client, client === connection else { return }
                received(bytes, first: first, ready: ready)
                first = false
            },
            onEnd: { [weak self, weak client] error in
                guard let self, let client, client === connection, !isClosed else { return }
                client.close()
                connection = nil
                if first, let ready { return ready(error ?? RPCError(code: .unavailable, message: "ended")) }
                onEnded?(error)
                // Only an open stream's end starts the delays afresh: one that never delivered
                // anything counts as a failed attempt.
                if !first { attempts = 0 }
                retry()
            }
        )
    }

    private func received(_ bytes: [UInt8], first: Bool, ready: ((RPCError?) -> Void)?) {
        // Value updates, nearly every event, by hand; the rest whole. Bytes that are not an event
        // are ignored, as before the stream counts as open.
        let update = ValueEventReader.valueUpdate(in: bytes)
        let event = update == nil ? try? Home_V1_Event(serializedBytes: bytes) : nil
        guard let revision = update?.revision ?? event?.revision else { return }
        self.revision = revision
        if first {
            attempts = 0
            if let ready { ready(nil) } else { onResumed?() }
        }
        if let update { onEvent?(update) }
        if case .resync? = event?.payload { resyncs += 1 }
    }

    private func retry() {
        retries.retry(attempt: attempts) { [weak self] in
            guard let self, !isClosed else { return }
            attempts += 1
            subscribe(ready: nil)
        }
    }

    func close() {
        isClosed = true
        connection?.close()
        connection = nil
    }
}
