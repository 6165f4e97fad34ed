import Foundation
import HomeAPI
import HomeClient
import HomeProto
import Testing
import Wire

extension HomeKitCodeTests {
    /// A server whose object limits are one (four action sets: the built-in ones), for 49.
    final class LimitedServer: Sendable {
        let server: HomedProcess
        let owner: HomeClient
        let simulators: Simulators

        init() async throws {
            server = try await HomedProcess.launch(arguments: [
                "--max-homes-per-account", "1", "--max-tokens-per-account", "1", "--max-users-per-home", "2",
                "--max-rooms-per-home", "1", "--max-zones-per-home", "1", "--max-accessories-per-home", "1",
                "--max-service-groups-per-home", "1", "--max-action-sets-per-home", "4",
                "--max-actions-per-action-set", "1", "--max-triggers-per-home", "1",
            ])
            owner = server.client()
            simulators = try await Simulators(server)
        }

        /// A new account (with the one token it may hold) and the one home it may have.
        func newcomer() async throws -> (account: UUID, client: HomeClient, home: HomeHandle) {
            let account = try await owner.createAccount(named: Self.uniqueName("Newcomer")).id.uuid
            let client = server.client(token: try await owner.issueToken(for: account).secret)
            return (account, client, client.home(try await client.addHome(named: "Small").id.uuid))
        }

        /// Account names must differ.
        static func uniqueName(_ base: String) -> String {
            "\(base) \(UUID().uuidString.prefix(8))"
        }
    }

    /// A server of its own whose clock reads a chosen time, with a home in a chosen time zone and an
    /// action set with one action (for the cases that depend on the date).
    final class ClockedServer: Sendable {
        let server: HomedProcess
        let owner: HomeClient
        let simulators: Simulators
        let home: HomeHandle
        let actionSet: UUID

        init(at now: Int64, in timeZone: String) async throws {
            let offset = now - Int64(Date().timeIntervalSince1970 * 1000)
            server = try await HomedProcess.launch(clockOffset: offset)
            owner = server.client()
            home = owner.home(try await owner.addHome(named: "Clocked").id.uuid)
            try await home.setTimeZone(timeZone)
            simulators = try await Simulators(server)
            let lamp = try await simulators.pair(Advertised.bulb("Lamp"), into: home).accessories[0]
            actionSet = try await home.addActionSet(named: "Evening").id.uuid
            try await home.addAction(
                writing: .bool(true),
                to: lamp.characteristic(Advertised.on).id.uuid,
                in: actionSet
            )
        }

        /// A trigger (disabled) firing the action set.
        func triggerRunningTheAction(from fireDate: Int64, every recurrence: Recurrence?) async throws -> UUID {
            let trigger = try await home.addTrigger(
                named: "Timer",
                fireDate: Date(milliseconds: fireDate),
                recurrence: recurrence
            )
            try await home.addActionSet(actionSet, toTrigger: trigger.id.uuid)
            return trigger.id.uuid
        }

        /// Makes `call`, then closes the clients (the server stops with this object).
        func finally(_ call: () async throws -> Void) async throws {
            var failure: (any Error)?
            do { try await call() } catch { failure = error }
            await simulators.close()
            await owner.close()
            if let failure { throw failure }
        }
    }
}
