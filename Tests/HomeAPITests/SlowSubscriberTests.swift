import Foundation
import HomeClient
import HomeProto
import RPCClient
import SwiftProtobuf
import Testing
import Wire

/// Subscribers that fall behind, against a real `homed`: values coalesce, layout events past the
/// bound resynchronise, and what a connection's streams and all streams hold is bounded in bytes.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SlowSubscriberTests {
    @Test func aSlowSubscriberCoalescesValuesAndResyncsPastItsBound() async throws {
        let setup = try await SubscriptionTests.Setup(arguments: ["--max-pending-events-per-subscription", "16"])
        let home = setup.home
        let lamp = try await setup.simulators.pair(Advertised.bulb("Lamp"), into: home).accessories[0]
        let brightness = lamp.characteristic(Advertised.brightness).id.uuid
        // A raw stream whose messages are never taken: the server may only send its credit ahead.
        var request = Home_V1_SubscribeRequest()
        request.homeIds = [home.id.data]
        request.characteristicIds = [brightness.data]
        request.snapshot = true
        let raw = try await RPCClient.connect(to: setup.server.endpoint)
        let stalled = raw.serverStream(
            "home.v1.HomeService/Subscribe",
            request: try request.serializedBytes(),
            metadata: [MetadataEntry(key: "authorization", value: Array("Bearer \(setup.server.ownerToken)".utf8))]
        )
        var messages = stalled.makeAsyncIterator()
        // The snapshot says the stream is open.
        #expect(kindName(try HomeEvent(serializedBytes: try await messages.next() ?? [])) == "snapshot")
        // Values: far more than the credit; they coalesce while the stream is behind.
        for level in 1...300 { try await home.writeCharacteristic(brightness, .int(Int64(level % 101))) }
        // Every write is either delivered or counted as skipped by a later delivered value.
        var events: [HomeEvent] = []
        var accounted: UInt64 = 0
        while accounted < 300, let bytes = try await messages.next() {
            let event = try HomeEvent(serializedBytes: bytes)
            events.append(event)
            accounted += 1 + event.characteristicValueUpdated.skippedUpdates
        }
        #expect(accounted == 300)
        #expect(events.count < 300)
        #expect(events.last?.characteristicValueUpdated.value.signedValue == Int64(300 % 101))
        // Layout changes are never dropped silently: past the bound the stream resynchronises.
        for index in 1...100 { _ = try await home.addRoom(named: "Room \(index)") }
        var layout: [HomeEvent] = []
        while layout.last?.resync.home.rooms.count != 100 && layout.last?.roomAdded.room.name != "Room 100" {
            guard let bytes = try await messages.next() else { break }
            layout.append(try HomeEvent(serializedBytes: bytes))
        }
        let resync = layout.first { kindName($0) == "resync" }
        #expect(resync?.resync.reason == .subscriberTooSlow)
        #expect(layout.count < 100)
        // After the resync, the events continue from its revision.
        if let resync, let last = layout.last {
            #expect(last.revision >= resync.revision)
        }
        await raw.close()
        await setup.close()
    }

    /// A Subscribe request of a few bytes asks for a whole home, which a stream without credit holds:
    /// a connection's streams may hold only so many bytes of home states unread, and the stream that
    /// would pass it ends with RESOURCE_EXHAUSTED. The bound is per connection.
    @Test func aConnectionsStreamsHoldBoundedHomeStatesUnread() async throws {
        let setup = try await SubscriptionTests.Setup(arguments: ["--max-unread-state-bytes", "3000"])
        // More than half the bound, and still within it.
        let stateSize = try await growHomeState(of: setup, past: 1_600)
        #expect(stateSize < 2_900)
        for _ in 1...2 {
            // Two connections: each takes one stream's state, and refuses the second.
            let raw = try await RPCClient.connect(to: setup.server.endpoint, configuration: Self.noCredit)
            let first = try snapshotStream(of: setup, on: raw)
            var messages = try snapshotStream(of: setup, on: raw).makeAsyncIterator()
            do {
                _ = try await messages.next()
                Issue.record("the second stream's state fits a bound it should pass")
            } catch let error as RPCError {
                #expect(error.code == .resourceExhausted)
                #expect(error.message.hasPrefix("this connection's subscriptions would hold "))
            }
            _ = first
            await raw.close()
        }
        await setup.close()
    }

    /// The home states all connections' streams hold unread are bounded too, by the server's budget
    /// for buffered bytes: a stream whose state would pass it ends with RESOURCE_EXHAUSTED even on a
    /// connection within its own bound.
    @Test func allStreamsTogetherHoldBoundedHomeStatesUnread() async throws {
        let setup = try await SubscriptionTests.Setup(arguments: [
            "--max-unread-state-bytes", "3000", "--max-buffered-bytes", "4000",
        ])
        // Two states pass 4,000 bytes; each is within a connection's 3,000.
        let stateSize = try await growHomeState(of: setup, past: 2_050)
        #expect(stateSize < 2_900)
        let holder = try await RPCClient.connect(to: setup.server.endpoint, configuration: Self.noCredit)
        let held = try snapshotStream(of: setup, on: holder)
        // The first state waits unread once the stream has started and the server answers others.
        _ = try await setup.home.addRoom(named: "After the first stream")
        // With credit: past the budget the stream ends, within it the state would arrive at once.
        let other = try await RPCClient.connect(to: setup.server.endpoint)
        var messages = try snapshotStream(of: setup, on: other).makeAsyncIterator()
        do {
            _ = try await messages.next()
            Issue.record("the second connection's state fits a budget it should pass")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
            #expect(error.message.hasPrefix("the server's subscriptions would hold "))
            #expect(error.message.contains(" bytes (the most is 4000) of events and home states waiting unread"))
            #expect(error.message.hasSuffix(": try again later"))
        }
        _ = held
        await other.close()
        await holder.close()
        await setup.close()
    }

    /// Events that wait count against the same bound, about 80 bytes each: streams that never read,
    /// each holding a value of every characteristic of a busy home, held gigabytes before.
    @Test func aConnectionsStreamsHoldBoundedEventsUnread() async throws {
        let setup = try await SubscriptionTests.Setup(arguments: ["--max-unread-bytes", "4000"])
        let authorization = MetadataEntry(key: "authorization", value: Array("Bearer \(setup.server.ownerToken)".utf8))
        var request = Home_V1_SubscribeRequest()
        request.homeIds = [setup.home.id.data]
        let raw = try await RPCClient.connect(to: setup.server.endpoint, configuration: Self.noCredit)
        let stalled = raw.serverStream(
            "home.v1.HomeService/Subscribe",
            request: try request.serializedBytes(),
            metadata: [authorization]
        )
        // A subscriber on another connection gets every change (it reads after them: 64 wait in
        // its credit, 36 in the server, within the bound).
        var reading = try await opened(setup.admin, ChangeOptions(homes: [setup.home.id]))
        // 4,000 bytes are 50 events: the 51st ends the stalled stream (however many rooms were
        // added before it opened: a call on its connection would wait for credit too).
        for index in 1...100 { _ = try await setup.home.addRoom(named: "Room \(index)") }
        var messages = stalled.makeAsyncIterator()
        do {
            while try await messages.next() != nil {}
            Issue.record("the stream held 100 events against a bound of 50")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
            #expect(error.message.contains(" bytes (the most is 4000) of events and home states waiting unread"))
        }
        #expect(try await take(100, from: &reading).count == 100)
        // What the ended stream held is given back (`rpc-client info` shows what all hold): only
        // the reading stream's share is left, and none of it once that one ends too.
        let info = { () async throws -> UInt64 in
            try await setup.owner.call(
                "home.v1.ServerInfo/Get",
                Home_V1_ServerInfoRequest(),
                returning: Home_V1_ServerInfoResponse.self
            ).subscriptionHeldBytes
        }
        #expect(try await info() < 4000)
        await setup.admin.close()
        try await eventually { try await info() == 0 }
        await raw.close()
        await setup.close()
    }

    /// The characteristics a stream names count too, for as long as it is open: each of a connection's
    /// streams naming every characteristic of a large home held one set of them each.
    @Test func theCharacteristicsStreamsNameCountAgainstTheBound() async throws {
        let setup = try await SubscriptionTests.Setup(arguments: ["--max-unread-bytes", "1000"])
        let bulbs = (1...30).map { Advertised.bulb("Bulb \($0)") }
        let added = try await setup.simulators.pair(Advertised.bridge("Hub", behind: bulbs), into: setup.home)
        let all = added.accessories.flatMap { $0.services.flatMap(\.characteristics) }.map(\.id.uuid)
        #expect(all.count >= 60)
        var many = setup.admin.changes(ChangeOptions(homes: [setup.home.id], characteristics: all)).makeAsyncIterator()
        do {
            _ = try await many.next()
            Issue.record("a stream naming \(all.count) characteristics fits 1,000 bytes")
        } catch let error as HomeClientError {
            #expect(error.status == .resourceExhausted, "\(error)")
            #expect(error.message.hasPrefix("this connection's subscriptions would hold "), "\(error)")
        }
        // One naming a few is taken (resuming before a change, so that it has one to show).
        let revision = try await setup.home.get().revision
        _ = try await setup.home.addRoom(named: "Seen")
        var few = setup.admin.changes(
            ChangeOptions(
                homes: [setup.home.id],
                characteristics: Array(all[..<4]),
                resumeFrom: [setup.home.id: revision]
            )
        ).makeAsyncIterator()
        #expect(try await take(1, from: &few).map(kindName) == ["roomAdded"])
        await setup.close()
    }

    /// A client that grants a stream no credit: the server keeps what it would send.
    static let noCredit: ClientConnection.Configuration = {
        var configuration = ClientConnection.Configuration()
        configuration.initialStreamCredit = 0
        return configuration
    }()

    /// A Subscribe stream of the setup's home, with its snapshot, as the owner.
    private func snapshotStream(of setup: SubscriptionTests.Setup, on client: RPCClient) throws -> ResponseStream {
        var request = Home_V1_SubscribeRequest()
        request.homeIds = [setup.home.id.data]
        request.snapshot = true
        return client.serverStream(
            "home.v1.HomeService/Subscribe",
            request: try request.serializedBytes(),
            metadata: [MetadataEntry(key: "authorization", value: Array("Bearer \(setup.server.ownerToken)".utf8))]
        )
    }

    /// Adds rooms to the setup's home until its state (a GetHome answer) is more than `size` bytes;
    /// returns the state's size.
    private func growHomeState(of setup: SubscriptionTests.Setup, past size: Int) async throws -> Int {
        let authorization = MetadataEntry(key: "authorization", value: Array("Bearer \(setup.server.ownerToken)".utf8))
        var homeRequest = Home_V1_GetHomeRequest()
        homeRequest.homeID = setup.home.id.data
        let reader = try await RPCClient.connect(to: setup.server.endpoint)
        var stateSize = 0
        var rooms = 0
        while stateSize <= size {
            rooms += 1
            _ = try await setup.home.addRoom(named: "Room \(rooms)")
            let answer = try await reader.unary(
                "home.v1.HomeService/GetHome",
                request: try homeRequest.serializedBytes(),
                metadata: [authorization]
            )
            stateSize = answer.count
        }
        await reader.close()
        return stateSize
    }
}
