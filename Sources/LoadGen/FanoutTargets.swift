import Foundation
import HomeProto
import RPCClient
import SwiftProtobuf
import TLS
import TLSOptions
import UV
import Wire

/// One side of the fan-out benchmark: subscribers that receive each change, producers that make them.
protocol FanoutTarget: AnyObject {
    /// Opens `count` subscriber connections (`stalled` of them never take what they are sent).
    func connectSubscribers(count: Int, stalled: Int, then done: @escaping ((any Error)?) -> Void) throws
    /// Opens the producer connections.
    func connectProducers(count: Int, then done: @escaping ((any Error)?) -> Void) throws
    /// Sends change `sequence`; `false` when every producer connection has its limit in flight.
    func send(_ sequence: UInt64) -> Bool
    func close()
}

/// Counts connection attempts and reports once all are done (or the first failure).
final class ConnectionTally {
    private var remaining: Int
    private var failure: (any Error)?
    private let done: ((any Error)?) -> Void

    init(_ count: Int, done: @escaping ((any Error)?) -> Void) {
        remaining = count
        self.done = done
        if count == 0 { done(nil) }
    }

    func finished(_ error: (any Error)?) {
        if let error, failure == nil { failure = error }
        remaining -= 1
        if remaining == 0 { done(failure) }
    }
}

/// HomeRPC: `Subscribe` streams following one characteristic's value events; producers writing it
/// with `WriteCharacteristic` (answered once durable: the event follows the commit), or the
/// characteristic's accessory reporting each new value itself (`ReportValues` on its link).
final class HomeRPCFanout: FanoutTarget {
    static let maxInFlight = 64
    /// Below the server's default of 100 concurrent streams per connection (the link is one of them).
    static let maxReportsInFlight = 96

    let loop: EventLoop
    let endpoint: Endpoint
    let meter: FanoutMeter
    let authorization: [MetadataEntry]
    let home: Data
    let characteristic: Data
    let subscriberConfiguration: ClientConnection.Configuration
    private var subscribers: [ClientConnection] = []
    private var producers: [ClientConnection] = []
    private var inFlight: [Int] = []
    /// Producers whose first call (which carries the token) has been sent.
    private var authenticated: Set<Int> = []
    private var nextProducer = 0
    /// When set, the changes are this accessory's reports instead of controller writes.
    /// The producers' connection settings (TLS among them); subscribers add their stream credit.
    private let producerConfiguration: ClientConnection.Configuration
    private let reporter: FleetAccessory?
    private var reportsInFlight = 0

    init(
        loop: EventLoop,
        endpoint: Endpoint,
        meter: FanoutMeter,
        token: String,
        home: Data,
        characteristic: Data,
        streamCredit: UInt32,
        configuration: ClientConnection.Configuration,
        reporter: FleetAccessory? = nil
    ) {
        self.reporter = reporter
        self.loop = loop
        self.endpoint = endpoint
        self.meter = meter
        self.authorization = [MetadataEntry(key: "authorization", value: Array("Bearer \(token)".utf8))]
        self.home = home
        self.characteristic = characteristic
        producerConfiguration = configuration
        var configuration = configuration
        configuration.initialStreamCredit = streamCredit
        subscriberConfiguration = configuration
    }

    func connectSubscribers(count: Int, stalled: Int, then done: @escaping ((any Error)?) -> Void) throws {
        var request = Home_V1_SubscribeRequest()
        request.homeIds = [home]
        request.kinds = [.characteristicValueUpdated]
        request.characteristicIds = [characteristic]
        let bytes: [UInt8] = try request.serializedBytes()
        let tally = ConnectionTally(count, done: done)
        for index in 0..<count {
            try ClientConnection.connect(to: endpoint, on: loop, configuration: subscriberConfiguration) {
                [self] result in
                switch result {
                case .failure(let error):
                    tally.finished(error)
                case .success(let connection):
                    subscribers.append(connection)
                    connection.serverStream(
                        "home.v1.HomeService/Subscribe",
                        request: bytes,
                        metadata: authorization,
                        // A stalled subscriber grants nothing beyond its initial credit.
                        automaticCredit: index >= stalled,
                        onMessage: { [meter] message in
                            // Integer values come back in signed_value (either is accepted on writes).
                            if let value = ValueEventReader.integerValue(in: message) {
                                meter.delivered(value)
                            } else {
                                meter.failed()
                            }
                        },
                        onEnd: { [meter] error in if error != nil { meter.failed() } }
                    )
                    tally.finished(nil)
                }
            }
        }
    }

    func connectProducers(count: Int, then done: @escaping ((any Error)?) -> Void) throws {
        if let reporter {
            // An accessory has one link: it is the only producer.
            reporter.onLinkEnded = { [meter] _ in meter.failed() }
            reporter.link(to: endpoint, configuration: producerConfiguration, on: loop, name: "", setupCode: "") {
                done($0.failureValue)
            }
            return
        }
        let tally = ConnectionTally(count, done: done)
        for _ in 0..<count {
            try ClientConnection.connect(to: endpoint, on: loop, configuration: producerConfiguration) {
                [self] result in
                if case .success(let connection) = result {
                    producers.append(connection)
                    inFlight.append(0)
                }
                tally.finished(result.failureValue)
            }
        }
    }

    func send(_ sequence: UInt64) -> Bool {
        if let reporter {
            guard reportsInFlight < Self.maxReportsInFlight else { return false }
            reportsInFlight += 1
            reporter.report(UInt32(truncatingIfNeeded: sequence), on: reporter.counters[0]) { [self] result in
                reportsInFlight -= 1
                if case .failure = result { meter.failed() }
            }
            return true
        }
        for _ in producers.indices {
            let index = nextProducer
            nextProducer = (nextProducer + 1) % producers.count
            guard inFlight[index] < Self.maxInFlight else { continue }
            var request = Home_V1_WriteCharacteristicRequest()
            request.homeID = home
            request.characteristicID = characteristic
            request.value.unsignedValue = sequence
            guard let bytes: [UInt8] = try? request.serializedBytes() else { return false }
            inFlight[index] += 1
            producers[index].unary(
                "home.v1.HomeService/WriteCharacteristic",
                request: bytes,
                metadata: authenticated.insert(index).inserted ? authorization : []
            ) { [self] result in
                inFlight[index] -= 1
                if case .failure = result { meter.failed() }
            }
            return true
        }
        return false
    }

    func close() {
        reporter?.onLinkEnded = nil
        reporter?.close()
        for connection in subscribers + producers { connection.close() }
    }
}

/// Redis: SUBSCRIBE on one channel; producers PUBLISH the sequence number to it.
final class RedisFanout: FanoutTarget {
    static let channel = "homerpc-fanout"

    let loop: EventLoop
    let endpoint: Endpoint
    let meter: FanoutMeter
    private var subscribers: [RedisSubscriber] = []
    private var producers: [RedisProducer] = []
    private var nextProducer = 0
    /// TLS for every connection (Redis's `--tls-port`), or `nil`.
    private let tls: TLSContext?

    init(loop: EventLoop, endpoint: Endpoint, meter: FanoutMeter, tls: TLSContext?) {
        self.loop = loop
        self.endpoint = endpoint
        self.meter = meter
        self.tls = tls
    }

    func connectSubscribers(count: Int, stalled: Int, then done: @escaping ((any Error)?) -> Void) throws {
        let tally = ConnectionTally(count, done: done)
        for index in 0..<count {
            try TLSClientOptions.connect(to: endpoint, on: loop, tls: tls) { [self] result in
                switch result {
                case .failure(let error):
                    tally.finished(error)
                case .success(let connection):
                    let subscriber = RedisSubscriber(connection: connection, meter: meter)
                    subscribers.append(subscriber)
                    do {
                        try subscriber.subscribe(to: Self.channel, stalled: index < stalled)
                        tally.finished(nil)
                    } catch {
                        tally.finished(error)
                    }
                }
            }
        }
    }

    func connectProducers(count: Int, then done: @escaping ((any Error)?) -> Void) throws {
        let tally = ConnectionTally(count, done: done)
        for _ in 0..<count {
            try TLSClientOptions.connect(to: endpoint, on: loop, tls: tls) { [self] result in
                switch result {
                case .failure(let error):
                    tally.finished(error)
                case .success(let connection):
                    let producer = RedisProducer(connection: connection, meter: meter)
                    producers.append(producer)
                    do {
                        try connection.startReading()
                        tally.finished(nil)
                    } catch {
                        tally.finished(error)
                    }
                }
            }
        }
    }

    func send(_ sequence: UInt64) -> Bool {
        for _ in producers.indices {
            let producer = producers[nextProducer]
            nextProducer = (nextProducer + 1) % producers.count
            if producer.publish(String(sequence), to: Self.channel) { return true }
        }
        return false
    }

    func close() {
        for subscriber in subscribers { subscriber.connection.close() }
        for producer in producers { producer.connection.close() }
    }
}

/// A Redis connection in subscriber mode.
final class RedisSubscriber: ConnectionDelegate {
    let connection: Connection
    let meter: FanoutMeter
    private var reader = RESPReader()

    init(connection: Connection, meter: FanoutMeter) {
        self.connection = connection
        self.meter = meter
        connection.delegate = self
    }

    /// A stalled subscriber sends SUBSCRIBE and never reads again.
    func subscribe(to channel: String, stalled: Bool) throws {
        try connection.write(RESPReader.command(["SUBSCRIBE", channel]))
        if !stalled { try connection.startReading() }
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        reader.append(bytes)
        do {
            while let value = try reader.next() {
                // ["message", channel, payload]
                guard case .array(let parts) = value, parts.count == 3, parts[0] == .bulk(Array("message".utf8)),
                    case .bulk(let payload?) = parts[2]
                else { continue }
                meter.delivered(UInt64(String(decoding: payload, as: UTF8.self)) ?? 0)
            }
        } catch {
            meter.failed()
            connection.close()
        }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {}
}

/// A Redis connection that publishes, with a bounded number of replies outstanding.
final class RedisProducer: ConnectionDelegate {
    static let maxInFlight = 64

    let connection: Connection
    let meter: FanoutMeter
    private var inFlight = 0

    init(connection: Connection, meter: FanoutMeter) {
        self.connection = connection
        self.meter = meter
        connection.delegate = self
    }

    func publish(_ message: String, to channel: String) -> Bool {
        guard inFlight < Self.maxInFlight else { return false }
        do {
            try connection.write(RESPReader.command(["PUBLISH", channel, message]))
            inFlight += 1
            return true
        } catch {
            meter.failed()
            return false
        }
    }

    /// Each reply is one integer line (`:<receivers>\r\n`).
    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") { inFlight -= 1 }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {}
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
