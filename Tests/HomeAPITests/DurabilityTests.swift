import Foundation
import HomeClient
import HomeProto
import RPCClient
import SQLite
import SwiftProtobuf
import Testing
import Wire

/// What the network side promises: acknowledged means durable through kill -9, a drain leaves no
/// call hanging, a retried mutation is applied once, and bad input gets a precise error.
@Suite struct DurabilityTests {
    @Test func acknowledgedMutationsSurviveSIGKILLAndRefusedOnesNeverAppear() async throws {
        let server = try await HomedProcess.launch()
        let setup = server.client()
        let homeID = try await setup.addHome(named: "Crash Home").id.uuid
        await setup.close()
        let (endpoint, token) = (server.endpoint, server.ownerToken)
        var acknowledgedInAll = 0
        for cycle in 1...20 {
            // The crash comes after a different number of acknowledged rooms in each cycle (or once
            // every writer stopped: the home can be full).
            let tally = Tally()
            let finished = Tally()
            let writers = (0..<4).map { writer in
                Task { () -> [String] in
                    let client = HomeClient(endpoint: endpoint, token: token, timeout: .seconds(5), retryPolicy: .never)
                    let home = client.home(homeID)
                    var acknowledged: [String] = []
                    for number in 0..<10_000 {
                        let name = "Room \(cycle) \(writer) \(number)"
                        do {
                            _ = try await home.addRoom(named: name)
                            acknowledged.append(name)
                            tally.add()
                        } catch {
                            break
                        }
                        // The same name again must be refused (31) and never stored.
                        if (try? await home.addRoom(named: name.uppercased())) != nil {
                            acknowledged.append("DUPLICATE \(name)")
                        }
                    }
                    await client.close()
                    finished.add()
                    return acknowledged
                }
            }
            let target = Int.random(in: 1...60)
            try await eventually(within: 30) { tally.value >= target || finished.value == writers.count }
            server.crash()
            var acknowledged: [String] = []
            for writer in writers { acknowledged += await writer.value }
            #expect(!acknowledged.contains { $0.hasPrefix("DUPLICATE") }, "a similar name was accepted")
            try await server.start()
            let client = server.client()
            let home = try await client.home(homeID).get()
            let present = Set(home.rooms.map(\.name))
            let missing = acknowledged.filter { !present.contains($0) }
            #expect(missing.isEmpty, "cycle \(cycle): \(missing.count) acknowledged rooms lost")
            let keys = Set(present.map { $0.lowercased() })
            #expect(keys.count == present.count, "cycle \(cycle): two rooms with similar names")
            acknowledgedInAll += acknowledged.count
            await client.close()
        }
        #expect(acknowledgedInAll > 20)
    }

    /// A read shows only what is durable: while a change waits for its commit (here held back by
    /// another connection's write lock on the file), reads of its home wait for it too, so no one
    /// sees a room a crash could take back, or a revision that could come to name another change.
    @Test func aReadWaitsForTheChangesItWouldShow() async throws {
        // Shared: by default the server holds the file locked, and no other connection could lock it.
        let server = try await HomedProcess.launch(arguments: ["--shared-store"])
        let client = server.client()
        let home = client.home(try await client.addHome(named: "Read Home").id.uuid)
        let before = try await home.get().revision
        let lock = try Database(path: server.storePath)
        try lock.execute("BEGIN IMMEDIATE")
        let add = Task { try await home.addRoom(named: "Pending") }
        try await server.waitForOpenCalls(1)
        let read = Task { try await home.get() }
        let listed = Task { try await client.listHomes() }
        try await server.waitForOpenCalls(3)
        try lock.execute("ROLLBACK")
        _ = try await add.value
        let seen = try await read.value
        #expect(seen.rooms.contains { $0.name == "Pending" })
        #expect(seen.revision == before + 1)
        #expect(try await listed.value.first { $0.id == seen.id }?.revision == before + 1)
        // They answered with the room and its revision once it was durable, not before: a read with
        // a short deadline, made while the lock is held, gets no answer.
        try lock.execute("BEGIN IMMEDIATE")
        let second = Task { try await home.addRoom(named: "Pending Too") }
        try await server.waitForOpenCalls(1)
        let quick = HomeClient(
            endpoint: server.endpoint,
            token: server.ownerToken,
            timeout: .milliseconds(300),
            retryPolicy: .never
        )
        let early = try? await quick.home(seen.id.uuid).get()
        try lock.execute("ROLLBACK")
        _ = try await second.value
        #expect(early == nil, "a read answered with a change still being committed")
        await quick.close()
        await client.close()
    }

    /// Two servers on one store would each acknowledge changes the other never sees: the second is
    /// refused at start, and the lock goes with the first server, also on kill -9.
    /// A server that freezes (SIGSTOP: its socket open, nothing answered) cannot hold a call without
    /// deadline: the client's keepalive, configured through `HomeClient`, ends it.
    @Test func aFrozenServerEndsACallWithoutDeadlineByTheClientsKeepalive() async throws {
        let server = try await HomedProcess.launch()
        var connection = ClientConnection.Configuration()
        connection.keepaliveInterval = .milliseconds(200)
        connection.keepaliveTimeout = .milliseconds(200)
        let client = HomeClient(
            endpoint: server.endpoint,
            token: server.ownerToken,
            timeout: nil,
            retryPolicy: .never,
            connection: connection
        )
        _ = try await client.listHomes()
        kill(server.pid, SIGSTOP)
        let frozenAt = ContinuousClock.now
        do {
            _ = try await client.listHomes()
            Issue.record("a frozen server answered")
        } catch {
            #expect(error.status == .unavailable)
            #expect(error.message.hasPrefix("keepalive timeout"))
        }
        // Not a timing measurement: the default keepalive (30 s + 10 s) would end it too, later.
        #expect(ContinuousClock.now - frozenAt < .seconds(20), "the configured keepalive was not used")
        kill(server.pid, SIGCONT)
        // Thawed, it serves the next call on a new connection.
        #expect(try await client.listHomes().isEmpty)
        await client.close()
        #expect(server.stop() == 0)
    }

    @Test func aSecondServerOnTheSameStoreIsRefused() async throws {
        let server = try await HomedProcess.launch()
        let second = Process()
        second.executableURL = URL(fileURLWithPath: HomedProcess.executablePath)
        second.arguments = [
            "--port", "0", "--store", server.storePath, "--log-level", "error",
            "--owner-token-file", server.directory.appendingPathComponent("second.token").path,
        ]
        let errors = Pipe()
        second.standardError = errors
        second.standardOutput = FileHandle.nullDevice
        try second.run()
        let deadline = Date().addingTimeInterval(15)
        while second.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        if second.isRunning {
            Issue.record("a second homed is serving the same store")
            kill(second.processIdentifier, SIGKILL)
        }
        second.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(second.terminationStatus == 1)
        #expect(message.contains("is in use by another homed (pid \(server.pid))"), "\(message)")
        // The first one never noticed.
        #expect(try await server.client().whoAmI().owner)
        server.crash()
        try await server.start()
        #expect(try await server.client().whoAmI().owner)
        server.stop()
    }

    @Test func aDrainUnderWriteLoadAnswersEveryCall() async throws {
        let server = try await HomedProcess.launch()
        let setup = server.client()
        let homeID = try await setup.addHome(named: "Drain Home").id.uuid
        var lamps: [UUID] = []
        let simulators = try await Simulators(server)
        for index in 0..<4 {
            let lamp = try await simulators.pair(Advertised.bulb("Lamp \(index)"), into: setup.home(homeID))
                .accessories[0]
            lamps.append(lamp.characteristic(Advertised.brightness).id.uuid)
        }
        await setup.close()
        let (endpoint, token) = (server.endpoint, server.ownerToken)
        let tally = Tally()
        let writers = lamps.map { characteristic in
            Task { () -> (last: Int64?, unexpected: [String]) in
                let client = HomeClient(endpoint: endpoint, token: token, timeout: .seconds(10), retryPolicy: .never)
                var last: Int64?
                var unexpected: [String] = []
                for value in Int64(1)... {
                    do {
                        try await client.home(homeID).writeCharacteristic(characteristic, .int(value % 101))
                        last = value % 101
                        tally.add()
                    } catch {
                        // Refused during the drain (retryable) or cut when the server went away.
                        if (error as? HomeClientError)?.status != .unavailable { unexpected.append("\(error)") }
                        break
                    }
                }
                await client.close()
                return (last, unexpected)
            }
        }
        // Under load: the drain starts once the writers have had writes acknowledged.
        try await tally.reach(50)
        let status = server.stop()
        #expect(status == 0)
        var results: [(Int64?, [String])] = []
        for writer in writers { results.append(await writer.value) }
        for unexpected in results.flatMap(\.1) { Issue.record("a call during the drain failed with \(unexpected)") }
        try await server.start()
        let client = server.client()
        for (characteristic, result) in zip(lamps, results) {
            guard let last = result.0 else { continue }
            let read = try await client.home(homeID).readCharacteristic(characteristic)
            #expect(read.value.signedValue == last, "an acknowledged write was lost in the drain")
        }
        await client.close()
        await simulators.close()
    }

    @Test func aRetriedMutationReturnsTheFirstOutcomeAcrossARestart() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let homeID = try await client.addHome(named: "Home").id
        let add = Home_V1_AddRoomRequest.with {
            $0.homeID = homeID
            $0.name = "Den"
        }
        let first = try await client.call(
            "home.v1.HomeService/AddRoom",
            add,
            returning: Home_V1_AddRoomResponse.self,
            idempotencyKey: "key-1"
        )
        let refused = Home_V1_AddRoomRequest.with {
            $0.homeID = homeID
            $0.name = "DEN"
        }
        await expectFailure(.alreadyExists, 31) {
            _ = try await client.call(
                "home.v1.HomeService/AddRoom",
                refused,
                returning: Home_V1_AddRoomResponse.self,
                idempotencyKey: "key-2"
            )
        }
        await client.close()
        try await server.restart()
        let again = server.client()
        let retried = try await again.call(
            "home.v1.HomeService/AddRoom",
            add,
            returning: Home_V1_AddRoomResponse.self,
            idempotencyKey: "key-1"
        )
        #expect(retried.room.id == first.room.id)
        // The refusal is remembered too, even though the name is now free.
        try await again.home(homeID.uuid).renameRoom(first.room.id.uuid, to: "Study")
        await expectFailure(.alreadyExists, 31) {
            _ = try await again.call(
                "home.v1.HomeService/AddRoom",
                refused,
                returning: Home_V1_AddRoomResponse.self,
                idempotencyKey: "key-2"
            )
        }
        // A different request under a used key is refused.
        let other = Home_V1_AddRoomRequest.with {
            $0.homeID = homeID
            $0.name = "Hall"
        }
        await expectFailure(.invalidArgument) {
            _ = try await again.call(
                "home.v1.HomeService/AddRoom",
                other,
                returning: Home_V1_AddRoomResponse.self,
                idempotencyKey: "key-1"
            )
        }
        let home = try await again.home(homeID.uuid).get()
        #expect(home.rooms.map(\.name) == ["Study"])
        await again.close()
    }

    /// The store write the SDK sends most (UpdateActionTargetValue, read from its bytes by a
    /// shortcut) keeps its idempotency key's outcome like every other mutation.
    @Test func aKeyedActionTargetUpdateIsAppliedOnce() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let home = client.home(try await client.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        let lamp = try await simulators.pair(Advertised.bulb("Lamp"), into: home).accessories[0]
        let actionSet = try await home.addActionSet(named: "Reading").id.uuid
        let action = UUID()
        try await home.addAction(
            writing: .int(40),
            to: lamp.characteristic(Advertised.brightness).id.uuid,
            in: actionSet,
            actionID: action
        )
        func update(to value: Int64, key: String) async throws(HomeClientError) -> Int64 {
            let request = Home_V1_UpdateActionTargetValueRequest.with {
                $0.homeID = home.id.data
                $0.actionSetID = actionSet.data
                $0.actionID = action.data
                $0.targetValue = .int(value)
            }
            let answer = try await client.call(
                "home.v1.HomeService/UpdateActionTargetValue",
                request,
                returning: Home_V1_UpdateActionTargetValueResponse.self,
                idempotencyKey: key
            )
            return answer.actionSet.actions[0].targetValue.signedValue
        }
        #expect(try await update(to: 10, key: "first") == 10)
        #expect(try await update(to: 20, key: "second") == 20)
        // The first call retried: its first answer, and nothing changes.
        #expect(try await update(to: 10, key: "first") == 10)
        let stored = try await home.get().actionSets.first { $0.id == actionSet.data }
        #expect(stored?.actions[0].targetValue.signedValue == 20)
        await expectFailure(.invalidArgument, nil, "another request under a used key") {
            _ = try await update(to: 30, key: "first")
        }
        await client.close()
        await simulators.close()
    }

    @Test func badInputGetsAPreciseErrorAndTheServerKeepsServing() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let created = try await client.addHome(named: "Home")
        let home = client.home(created.id.uuid)
        let simulators = try await Simulators(server)
        let lamp = try await simulators.pair(Advertised.bulb("Lamp"), into: home).accessories[0]
        let brightness = lamp.characteristic(Advertised.brightness).id.uuid
        await expectFailure(.invalidArgument, 43, "wrong value type") {
            try await home.writeCharacteristic(brightness, .bool(true))
        }
        await expectFailure(.invalidArgument, 45, "above maximum") {
            try await home.writeCharacteristic(brightness, .int(101))
        }
        await expectFailure(.invalidArgument, 44, "below minimum") {
            try await home.writeCharacteristic(brightness, .int(-1))
        }
        await expectFailure(.invalidArgument, 35, "prohibited character") { _ = try await home.addRoom(named: "Room!") }
        await expectFailure(.invalidArgument, 36, "bad first character") {
            _ = try await home.addRoom(named: "-Garage")
        }
        await expectFailure(.invalidArgument, 46, "too long") {
            _ = try await home.addRoom(named: String(repeating: "a", count: 10_000))
        }
        await expectFailure(.notFound, 2, "unknown id") { try await home.removeRoom(UUID()) }
        await expectFailure(.notFound, 2, "unknown home") { _ = try await client.home(UUID()).get() }
        do {
            _ = try await client.call(
                "home.v1.HomeService/GetHome",
                Home_V1_GetHomeRequest.with { $0.homeID = Data([1, 2, 3]) },
                returning: Home_V1_GetHomeResponse.self
            )
            Issue.record("a 3-byte id was accepted")
        } catch {
            #expect(error.status == .invalidArgument && error.homeKitCode == 3 && error.field == "home_id")
        }
        let badToken = HomeClient(endpoint: server.endpoint, token: "not-a-token")
        await expectFailure(.unauthenticated, nil, "token of the wrong shape") { _ = try await badToken.listHomes() }
        await badToken.close()
        // Bytes that are not the request message.
        let raw = try await RPCClient.connect(to: server.endpoint)
        do {
            _ = try await raw.unary(
                "home.v1.HomeService/ListHomes",
                request: [0xFF, 0xFF, 0xFF],
                metadata: [MetadataEntry(key: "authorization", value: Array("Bearer \(server.ownerToken)".utf8))]
            )
            Issue.record("an undecodable request was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        await raw.close()
        #expect(try await client.listHomes().count == 1)
        await client.close()
        await simulators.close()
    }
}
