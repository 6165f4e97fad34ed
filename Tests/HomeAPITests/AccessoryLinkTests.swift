import Foundation
import HomeClient
import HomeProto
import SwiftProtobuf
import Testing
import Wire

@testable import RPCClient

/// The accessory face against a real `homed`, with simulated accessories over real sockets.
@Suite struct AccessoryLinkTests {
    @Test func pairingTakesTheRightCodeAndWritesWaitForTheAccessory() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        var browser = try await owner.browseAccessories().makeAsyncIterator()
        let lamp = SimulatedAccessory(Advertised.bulb("Lamp"), setupCode: Simulators.setupCode, link: simulators.link)
        try await lamp.start()
        let lampID = await lamp.id
        // An advertisement is checked against the catalog: a lightbulb without On is refused.
        var broken = Advertised.bulb("Broken")
        broken.services[0].characteristics.removeFirst()
        await expectFailure(.invalidArgument, 93, "a standard service without a required characteristic") {
            try await SimulatedAccessory(broken, setupCode: Simulators.setupCode, link: simulators.link).start()
        }
        let found = try await browser.next()?.found
        #expect(found?.name == "Lamp" && found?.id.uuid == lampID)

        await expectFailure(.permissionDenied, 18, "a wrong setup code") {
            _ = try await home.addAccessory(await lamp.id, setupCode: "111-22-333")
        }
        let added = try await home.addAccessory(await lamp.id, setupCode: Simulators.setupCode)[0]
        #expect(added.reachable)
        #expect(try await browser.next()?.removed.reason == .paired)
        _ = await lamp.paired()

        // A write is answered only once the accessory applied it; a refusal maps its HAP status.
        let brightness = added.characteristic(Advertised.brightness).id.uuid
        try await home.writeCharacteristic(brightness, .int(30))
        #expect(await lamp.values[brightness] == .int(30))
        await lamp.setWriteBehaviour(.refuse(hapStatus: -70403))
        await expectFailure(.unavailable, 14, "the accessory is busy") {
            _ = try await home.writeCharacteristic(brightness, .int(40))
        }
        #expect(try await home.readCharacteristic(brightness).value.signedValue == 30)

        // The accessory's own change reaches the cache and the subscribers that enabled
        // notifications on it, and no others: On has none, so its change is not delivered.
        try await home.enableNotification(brightness)
        var followers = try await opened(owner, ChangeOptions(homes: [home.id]))
        try await lamp.change(brightness, to: .int(77))
        let event = try await followers.next()
        #expect(event?.characteristicValueUpdated.value.signedValue == 77)
        #expect(event?.initiator.accessoryID.uuid == lampID)
        #expect(try await home.readCharacteristic(brightness).value.signedValue == 77)
        try await lamp.change(added.characteristic(Advertised.on).id.uuid, to: .bool(true))
        try await lamp.change(brightness, to: .int(78))
        #expect(try await followers.next()?.characteristicValueUpdated.value.signedValue == 78)

        await simulators.close()
        await owner.close()
    }

    /// The link's connection takes the settings the accessory passes: with the smallest frame limit
    /// a protocol peer may announce, the server cannot echo a large bridge's advertisement and ends
    /// the stream with RESOURCE_EXHAUSTED; over a link with the default limit the same bridge is
    /// advertised.
    @Test func anAccessoryLinkTakesItsConnectionSettings() async throws {
        let server = try await HomedProcess.launch()
        var smallFrames = ClientConnection.Configuration()
        smallFrames.maxFrameSize = WireLimits.minimumMaxFrameSize
        let narrow = try await AccessoryLinkClient.connect(to: server.endpoint, connection: smallFrames)
        let wide = try await AccessoryLinkClient.connect(to: server.endpoint)
        let bridge = { Advertised.bridge("Bridge", behind: (1...110).map { Advertised.bulb("Bulb \($0)") }) }
        let advertisement: [UInt8] = try bridge().serializedBytes()
        #expect(advertisement.count > WireLimits.minimumMaxFrameSize)
        await expectFailure(.resourceExhausted, nil, "an advertisement past the link's frame limit") {
            try await SimulatedAccessory(bridge(), setupCode: Simulators.setupCode, link: narrow).start()
        }
        try await SimulatedAccessory(bridge(), setupCode: Simulators.setupCode, link: wide).start()
        await narrow.close()
        await wide.close()
    }

    /// Answers travel on the link's connection, so a link whose connection used its last stream id
    /// ends (and the accessory is unreachable until it attaches again) instead of leaving every
    /// later command to time out.
    @Test func aLinkWhoseConnectionUsedEveryStreamIDEnds() async throws {
        let server = try await HomedProcess.launch(arguments: ["--accessory-timeout", "3000"])
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        var nearTheEnd = ClientConnection.Configuration()
        nearTheEnd.firstStreamID = UInt32.max - 1
        let link = try await AccessoryLinkClient.connect(to: server.endpoint, connection: nearTheEnd)
        let lamp = SimulatedAccessory(Advertised.bulb("Lamp"), setupCode: Simulators.setupCode, link: link)
        try await lamp.start()  // Advertise: the last stream id but one
        let on = try await home.addAccessory(await lamp.id, setupCode: Simulators.setupCode)[0]
            .characteristic(Advertised.on).id.uuid
        _ = await lamp.paired()
        try await home.writeCharacteristic(on, .bool(true))  // answered on the last id
        await expectFailure(.unavailable, 4, "a command whose answer had no stream id left") {
            _ = try await home.writeCharacteristic(on, .bool(false))
        }
        #expect(try await home.get().accessories.map(\.reachable) == [false])
        await link.close()
        await owner.close()
    }

    @Test func aSilentAccessoryTimesOutAndTheServerKeepsServing() async throws {
        let server = try await HomedProcess.launch(arguments: ["--accessory-timeout", "300"])
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        let (lamp, added) = try await simulators.pair(Advertised.bulb("Lamp"), into: home)
        let on = added[0].characteristic(Advertised.on).id.uuid
        await lamp.setWriteBehaviour(.ignore)
        let waiting = Task { try await home.writeCharacteristic(on, .bool(true)) }
        // Meanwhile the server answers everything else.
        #expect(try await home.get().accessories.count == 1)
        do {
            _ = try await waiting.value
            Issue.record("a write nobody answered succeeded")
        } catch let error as HomeClientError {
            #expect(error.status == .deadlineExceeded && error.homeKitCode == 8)
        }
        #expect(try await home.readCharacteristic(on).value.boolValue == false)
        await simulators.close()
        await owner.close()
    }

    @Test func reachabilityFollowsTheLinkAndTheCredentialSurvivesRestarts() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        var simulators = try await Simulators(server)
        let bridgeDescription = Advertised.bridge("Hub", behind: [Advertised.bulb("Porch")])
        let (bridge, added) = try await simulators.pair(bridgeDescription, into: home)
        let porch = added[1]
        let porchOn = porch.characteristic(Advertised.on).id.uuid
        let credential = await bridge.paired()
        let description = await bridge.description

        // Removing a bridged accessory directly: 34. Only bridges can be unblocked: 81.
        await expectFailure(.failedPrecondition, 34) { try await home.removeAccessory(porch.id.uuid) }
        await expectFailure(.failedPrecondition, 81) { _ = try await home.unblockAccessory(porch.id.uuid) }

        // The link drops: the bridge and what is behind it are unreachable at once (88 behind it).
        await simulators.close()
        try await eventually { try await home.get().accessories.allSatisfy { !$0.reachable } }
        await expectFailure(.unavailable, 88) { _ = try await home.writeCharacteristic(porchOn, .bool(true)) }
        await expectFailure(.unavailable, 4) { try await home.identifyAccessory(added[0].id.uuid) }

        // Someone else claiming the bridge's id is refused and changes nothing.
        simulators = try await Simulators(server)
        let impostor = SimulatedAccessory(description, setupCode: "135-79-246", link: simulators.link)
        await #expect(throws: HomeClientError.self) { try await impostor.start() }
        let forger = SimulatedAccessory(
            description,
            setupCode: Simulators.setupCode,
            credential: "hac_" + String(repeating: "0", count: 64),
            link: simulators.link
        )
        await #expect(throws: HomeClientError.self) { try await forger.start() }

        // Both sides restart; the bridge attaches with its credential and is reachable again.
        await owner.close()
        try await server.restart()
        let again = server.client()
        let sameHome = again.home(home.id)
        simulators = try await Simulators(server)
        let back = SimulatedAccessory(
            description,
            setupCode: Simulators.setupCode,
            credential: credential,
            link: simulators.link
        )
        try await back.start()
        try await eventually { try await sameHome.get().accessories.allSatisfy(\.reachable) }
        // Claims while the real bridge is attached are refused, and it keeps working.
        await #expect(throws: HomeClientError.self) { try await forger.start() }
        await #expect(throws: HomeClientError.self) { try await impostor.start() }
        try await sameHome.writeCharacteristic(porchOn, .bool(true))
        #expect(await back.values[porchOn] == .bool(true))

        // The bridge comes back serving other accessories than it was paired with: blocked (61 for
        // it and those behind it) until an administrator unblocks it.
        await back.stop()
        var changed = description
        changed.bridgedAccessories = []
        let swapped = SimulatedAccessory(
            changed,
            setupCode: Simulators.setupCode,
            credential: credential,
            link: simulators.link
        )
        try await swapped.start()
        try await eventually { try await sameHome.get().accessories.first { $0.id == added[0].id }?.blocked == true }
        await expectFailure(.failedPrecondition, 61) {
            _ = try await sameHome.writeCharacteristic(porchOn, .bool(false))
        }
        #expect(try await sameHome.unblockAccessory(added[0].id.uuid).blocked == false)
        try await sameHome.writeCharacteristic(porchOn, .bool(false))

        // Removal revokes the credential and tells the accessory.
        try await sameHome.removeAccessory(added[0].id.uuid)
        try await eventually { await swapped.credential == nil }
        let afterRemoval = SimulatedAccessory(
            description,
            setupCode: Simulators.setupCode,
            credential: credential,
            link: simulators.link
        )
        await #expect(throws: HomeClientError.self) { try await afterRemoval.start() }
        await simulators.close()
        await again.close()
    }

    @Test func anActionSetWritesToThreeAccessoriesAndReportsEachResult() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        var lamps: [(SimulatedAccessory, UUID)] = []
        let scene = try await home.addActionSet(named: "Evening")
        for name in ["One", "Two", "Three"] {
            let (simulator, added) = try await simulators.pair(Advertised.bulb(name), into: home)
            let on = added[0].characteristic(Advertised.on).id.uuid
            try await home.addAction(writing: .bool(true), to: on, in: scene.id.uuid)
            lamps.append((simulator, on))
        }
        try await home.executeActionSet(scene.id.uuid)
        for (simulator, on) in lamps { #expect(await simulator.values[on] == .bool(true)) }

        // One refuses: 64, with each action's result in the set's order.
        for (simulator, on) in lamps { try await simulator.change(on, to: .bool(false)) }
        await lamps[1].0.setWriteBehaviour(.refuse(hapStatus: -70402))
        do {
            try await home.executeActionSet(scene.id.uuid)
            Issue.record("a partly refused execution succeeded")
        } catch {
            #expect(error.homeKitCode == 64)
            #expect(error.itemResults.map(\.homekitCode) == [0, 4, 0])
        }
        #expect(try await home.readCharacteristic(lamps[0].1).value.boolValue == true)
        #expect(try await home.readCharacteristic(lamps[1].1).value.boolValue == false)
        await simulators.close()
        await owner.close()
    }

    @Test func reportsAreAllOrNothingAndOnlyFromTheLinkAndCommandsOverlap() async throws {
        // The timeout bounds the window in which the silent accessory's execution is seen running:
        // at 1 s a loaded CI machine missed it, so it is long enough to outlast slow polling.
        let server = try await HomedProcess.launch(arguments: ["--accessory-timeout", "4000"])
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        let (lamp, added) = try await simulators.pair(Advertised.bulb("Lamp"), into: home)
        let lampID = await lamp.id
        let brightness = added[0].characteristic(Advertised.brightness).id.uuid
        let on = added[0].characteristic(Advertised.on).id.uuid

        // A batch with one value its metadata forbids applies nothing.
        await expectFailure(.invalidArgument, 50) {
            try await simulators.link.report([(brightness, .int(20)), (on, .int(5))])
        }
        #expect(try await home.readCharacteristic(brightness).value.signedValue == 50)
        try await simulators.link.report([(brightness, .int(20)), (on, .bool(true))])
        #expect(try await home.readCharacteristic(brightness).value.signedValue == 20)
        try await simulators.link.reportFirmwareVersion("2.0.1", of: lampID)
        #expect(try await home.get().accessories.first?.firmwareVersion == "2.0.1")

        // Another connection cannot speak for the accessory.
        let stranger = try await AccessoryLinkClient.connect(to: server.endpoint)
        await expectFailure(.notFound, 2) { try await stranger.report([(brightness, .int(1))]) }
        await expectFailure(.notFound, 2) { try await stranger.reportFirmwareVersion("6.6.6", of: lampID) }
        await expectFailure(.notFound, 2) { try await stranger.answer(1) }
        await stranger.close()

        // Many writes to one accessory are out at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for level in 1...20 {
                group.addTask { _ = try await home.writeCharacteristic(brightness, .int(Int64(level))) }
            }
            try await group.waitForAll()
        }
        #expect(await lamp.appliedWrites.count == 20)
        #expect(await lamp.appliedWriteCount == 20)

        // An action set whose write is out is executing: a second execution gets 65.
        let scene = try await home.addActionSet(named: "Scene")
        try await home.addAction(writing: .bool(false), to: on, in: scene.id.uuid)
        await lamp.setWriteBehaviour(.ignore)
        let running = Task { try await home.executeActionSet(scene.id.uuid) }
        try await eventually { try await home.get().actionSets.first { $0.id == scene.id }?.executing == true }
        await expectFailure(.aborted, 65) { try await home.executeActionSet(scene.id.uuid) }
        // The silent accessory: every write failed, 63 with its 8.
        do {
            try await running.value
            Issue.record("an execution nobody answered succeeded")
        } catch let error as HomeClientError {
            #expect(error.homeKitCode == 63 && error.itemResults.map(\.homekitCode) == [8])
        }
        await simulators.close()
        await owner.close()
    }

    @Test func guessingSetupCodesIsLimited() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        let lamp = SimulatedAccessory(Advertised.bulb("Lamp"), setupCode: Simulators.setupCode, link: simulators.link)
        try await lamp.start()
        let id = await lamp.id
        // As fast as the client can: five wrong codes are compared, the rest refused unread (and one
        // more compared for every 10 s the guesses took: the allowance refills, on a loaded machine).
        var messages: [String] = []
        let started = ContinuousClock.now
        for guess in 0..<50 {
            do {
                _ = try await home.addAccessory(
                    id,
                    setupCode: String(format: "%03d-%02d-%03d", guess, guess % 100, guess)
                )
            } catch {
                #expect(error.homeKitCode == 18)
                messages.append(error.message)
            }
        }
        let refills = Int((ContinuousClock.now - started) / .seconds(10))
        let compared = messages.filter { $0.hasPrefix("wrong setup code") }.count
        #expect((5...5 + refills).contains(compared), "\(compared) compared, \(refills) refills")
        #expect(messages.filter { $0.contains("too many wrong setup codes") }.count == 50 - compared)
        // Even the right code waits for the allowance (unless it refilled meanwhile).
        do {
            _ = try await home.addAccessory(id, setupCode: Simulators.setupCode)
            #expect(ContinuousClock.now - started >= .seconds(10), "the right code was compared with no allowance left")
        } catch {
            #expect(error.status == .permissionDenied && error.homeKitCode == 18, "\(error)")
        }
        await simulators.close()
        await owner.close()
    }
}

/// The browser's bounds: an advertisement past the most accessories or the most bytes it holds is
/// refused with 49, and one that leaves gives its room back.
@Suite struct AdvertisementBoundsTests {
    /// Advertises bulbs on one link until one is refused; returns those advertised and the refusal.
    func advertiseUntilRefused(_ link: AccessoryLinkClient) async throws -> ([SimulatedAccessory], any Error) {
        var started: [SimulatedAccessory] = []
        for index in 0..<100 {
            let bulb = SimulatedAccessory(Advertised.bulb("Bulb \(index)"), setupCode: Simulators.setupCode, link: link)
            do { try await bulb.start() } catch { return (started, error) }
            started.append(bulb)
        }
        throw HomedFailure(message: "100 advertisements were taken")
    }

    @Test(arguments: [
        (["--max-advertised-accessories", "3"], "3 advertised accessories"),
        // A bulb's description is about 240 bytes encoded.
        (["--max-advertised-bytes", "800"], "bytes of advertised descriptions"),
    ])
    func anAdvertisementPastTheBrowsersBoundIsRefused(flags: [String], message: String) async throws {
        let server = try await HomedProcess.launch(arguments: flags)
        let simulators = try await Simulators(server)
        let (started, refusal) = try await advertiseUntilRefused(simulators.link)
        #expect(started.count == 3)
        await expectFailure(.resourceExhausted, 49) { throw refusal }
        #expect("\(refusal)".contains(message), "\(refusal)")
        // The refused one holds nothing; one that leaves makes room for another.
        let client = server.client()
        let info = try await client.call(
            "home.v1.ServerInfo/Get",
            Home_V1_ServerInfoRequest(),
            returning: Home_V1_ServerInfoResponse.self
        )
        await client.close()
        #expect(info.advertisedBytes > 0 && info.advertisedBytes <= info.advertisedBytesLimit)
        await started[0].stop()
        try await eventually {
            let again = SimulatedAccessory(
                Advertised.bulb("Again"),
                setupCode: Simulators.setupCode,
                link: simulators.link
            )
            return (try? await again.start()) != nil
        }
        await simulators.close()
    }
}

/// Polls `condition` until it holds (a state the server reaches on its own), for at most `seconds`.
/// - Throws: when it does not hold in time.
func eventually(within seconds: Int = 5, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<(seconds * 20) {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw HomedFailure(message: "the condition did not hold within \(seconds) s")
}

/// Timer triggers fire from the server's scheduler, with its clock shifted so that a fire date (on
/// a whole minute) is seconds away instead of minutes.
@Suite struct TriggerFiringTests {
    static var realNow: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// The clock offset that puts the server `seconds` before `time`.
    static func offset(reaching time: Int64, in seconds: Int64) -> Int64 {
        time - seconds * 1000 - realNow
    }

    /// A server clock set back an hour: a one-shot half an hour in the real past is still ahead of
    /// the server's clock, so it enables.
    @Test func aClockSetBackIsTakenAsTheOffset() async throws {
        let server = try await HomedProcess.launch(clockOffset: -3_600_000)
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        let (_, added) = try await simulators.pair(Advertised.bulb("Lamp"), into: home)
        let scene = try await home.addActionSet(named: "Scene")
        try await home.addAction(
            writing: .bool(true),
            to: added[0].characteristic(Advertised.on).id.uuid,
            in: scene.id.uuid
        )
        let trigger = try await home.addTrigger(
            named: "Half An Hour Ago",
            fireDate: Date(timeIntervalSince1970: Double((Self.realNow / 60_000 - 30) * 60_000) / 1000)
        )
        try await home.addActionSet(scene.id.uuid, toTrigger: trigger.id.uuid)
        try await home.enableTrigger(trigger.id.uuid)
        await simulators.close()
        await owner.close()
        #expect(server.stop() == 0)
    }

    @Test func aTriggerFiresOnTimeRepeatsByItsRecurrenceAndFiresAfterARestart() async throws {
        // Set up at the real time, ten minutes before the fire date.
        let fireDate = (Self.realNow / 60_000 + 10) * 60_000
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let simulators = try await Simulators(server)
        let (lamp, added) = try await simulators.pair(Advertised.bulb("Lamp"), into: home)
        let on = added[0].characteristic(Advertised.on).id.uuid
        let scene = try await home.addActionSet(named: "Lights On")
        try await home.addAction(writing: .bool(true), to: on, in: scene.id.uuid)
        let trigger = try await home.addTrigger(
            named: "Every Five",
            fireDate: Date(timeIntervalSince1970: Double(fireDate) / 1000),
            recurrence: Recurrence(5, .minute)
        )
        try await home.addActionSet(scene.id.uuid, toTrigger: trigger.id.uuid)
        try await home.enableTrigger(trigger.id.uuid)
        let credential = await lamp.paired()
        let description = await lamp.description
        await simulators.close()
        await owner.close()

        // Each run starts the server's clock seconds before an occurrence: the first at the fire
        // date, the next by the recurrence, five minutes on.
        for occurrence in [fireDate, fireDate + 300_000] {
            server.clockOffsetMilliseconds = Self.offset(reaching: occurrence, in: 8)
            try await server.restart()
            let link = try await Simulators(server)
            let back = SimulatedAccessory(
                description,
                setupCode: Simulators.setupCode,
                credential: credential,
                link: link.link
            )
            try await back.start()
            #expect(await back.values[on] == .bool(false), "fired before its date")
            try await eventually(within: 30) { await back.values[on] == .bool(true) }
            let client = server.client()
            let fired = try await client.home(home.id).get().triggers.first { $0.id == trigger.id }
            #expect(fired?.lastFireDateMs == occurrence)
            #expect(fired?.enabled == true)
            // Back to off for the next occurrence (the accessory's own change).
            try await back.change(on, to: .bool(false))
            await link.close()
            await client.close()
        }
    }
}
