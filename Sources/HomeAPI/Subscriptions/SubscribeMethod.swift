import Foundation
import HomeProto
import HomeService
import RPCServer

/// `home.v1.HomeService/Subscribe`: checks the request, then hands the stream to the hub.
enum SubscribeMethod {
    static let method = APIMethod.stream(
        HomeMethods.service + "Subscribe",
        Home_V1_SubscribeRequest.self,
        Home_V1_Event.self
    ) { api, call, request, caller throws(APIFailure) in
        let subscription = Subscription(
            call: call,
            caller: caller,
            // A token limited to homes follows those, not the homes its account joins later.
            followsEveryHome: request.homeIds.isEmpty && caller.principal.limits?.homes == nil,
            kinds: try kinds(request.kinds),
            characteristics: try characteristics(request.characteristicIds, api, caller),
            includeOwnChanges: request.includeOwnChanges,
            maxPendingLayoutEvents: api.subscriptions.maxPendingLayoutEvents
        )
        api.subscriptions.open(subscription, starts: try starts(request, api, caller))
    }

    /// Where the stream starts in each home: its resume point, a snapshot, or the current revision.
    private static func starts(
        _ request: Home_V1_SubscribeRequest,
        _ api: HomeAPI,
        _ caller: Caller
    ) throws(APIFailure) -> [(HomeID, SubscriptionHub.Start)] {
        var homes: [HomeID] = []
        // A set, not the list, to find a repeat: a request may name 58,000 ids, and comparing each
        // with every earlier one held the loop for 450 ms at 55,000.
        var named: Set<HomeID> = []
        for (index, data) in request.homeIds.enumerated() {
            let id: HomeID = try ProtoDecoding.id(data, "home_ids[\(index)]")
            guard named.insert(id).inserted else {
                throw .invalid("home_ids[\(index)]", "home \(id) is named twice")
            }
            homes.append(id)
        }
        if request.homeIds.isEmpty {
            homes = api.store.homes(of: caller.account).map(\.id).filter(caller.principal.mayActIn)
        }
        var resume: [HomeID: UInt64] = [:]
        for (index, point) in request.resumeFrom.enumerated() {
            let field = "resume_from[\(index)].home_id"
            let id: HomeID = try ProtoDecoding.id(point.homeID, field)
            guard resume[id] == nil else { throw .invalid(field, "home \(id) has two resume points") }
            resume[id] = point.revision
        }
        var starts: [(HomeID, SubscriptionHub.Start)] = []
        for (index, id) in homes.enumerated() {
            // A home the caller cannot see (or its token may not act in) is NOT_FOUND, like one
            // that does not exist.
            let current = try attempt(object: id.raw, field: request.homeIds.isEmpty ? "" : "home_ids[\(index)]") {
                () throws(HomeServiceError) in
                guard caller.principal.mayActIn(id) else { throw AccessRules.noSuchHome }
                return try api.store.revision(of: id, as: caller.account)
            }
            if let revision = resume.removeValue(forKey: id) {
                starts.append((id, .after(revision)))
            } else {
                starts.append((id, request.snapshot ? .snapshot : .after(current)))
            }
        }
        if let (stray, _) = resume.first {
            guard request.homeIds.isEmpty else {
                throw .invalid("resume_from", "resume point for home \(stray), which home_ids does not name")
            }
            // Following every home of the caller: a home outside them is one they cannot see.
            throw APIFailure(AccessRules.noSuchHome, object: stray.raw, field: "resume_from")
        }
        return starts
    }

    /// The kinds asked for; `nil` for all.
    private static func kinds(_ kinds: [Home_V1_EventKind]) throws(APIFailure) -> ChangeKinds? {
        guard !kinds.isEmpty else { return nil }
        var result = ChangeKinds()
        for (index, kind) in kinds.enumerated() {
            guard let changeKind = ChangeKind(rawValue: UInt8(clamping: kind.rawValue)),
                SubscriptionHub.deliverableKinds.contains(changeKind)
            else {
                throw .invalid("kinds[\(index)]", "kinds[\(index)] \(kind.rawValue) is not an event kind")
            }
            result.insert(changeKind)
        }
        return result
    }

    /// Characteristics named for value events: each one the caller can see.
    private static func characteristics(
        _ ids: [Data],
        _ api: HomeAPI,
        _ caller: Caller
    ) throws(APIFailure) -> Set<CharacteristicID> {
        var result: Set<CharacteristicID> = []
        for (index, data) in ids.enumerated() {
            let field = "characteristic_ids[\(index)]"
            let id: CharacteristicID = try ProtoDecoding.id(data, field)
            try attempt(object: id.raw, field: field) { () throws(HomeServiceError) in
                let state = try api.store.characteristicState(id, as: caller.account)
                guard caller.principal.mayActIn(state.characteristic.home) else {
                    throw HomeServiceError(.notFound, "no such characteristic \(id)")
                }
            }
            result.insert(id)
        }
        return result
    }
}
