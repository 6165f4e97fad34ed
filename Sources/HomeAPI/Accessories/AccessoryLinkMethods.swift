import HomeProto
import HomeService
import RPCServer
import RPCServices
import SwiftProtobuf
import Wire

/// `home.v1.AccessoryLink` (what accessories call) and `home.v1.HomeService/BrowseAccessories`.
/// Accessory methods take no bearer token: an unpaired accessory has nothing to prove, a paired one
/// proves itself with its credential on Attach, and answers and reports count only on the
/// connection that holds the accessory's link.
enum AccessoryLinkMethods {
    static let service = "home.v1.AccessoryLink/"
    static let advertise = service + "Advertise"
    static let attach = service + "Attach"
    static let answerCommand = service + "AnswerCommand"
    static let reportValues = service + "ReportValues"
    static let reportFirmwareVersion = service + "ReportFirmwareVersion"

    static var names: [String] { [advertise, attach, answerCommand, reportValues, reportFirmwareVersion] }

    /// The controllers' accessory browser (HomeKit's HMAccessoryBrowser).
    static let browse = APIMethod.stream(
        HomeMethods.service + "BrowseAccessories",
        Home_V1_BrowseAccessoriesRequest.self,
        Home_V1_BrowseEvent.self
    ) { api, call, _, _ throws(APIFailure) in
        api.links.browse(on: call)
    }

    static func register(_ api: HomeAPI, in registry: inout MethodRegistry) {
        registry.registerServerStreaming(advertise, request: Home_V1_AdvertiseRequest.self) { call, request in
            do throws(APIFailure) {
                let description = try ProtoDecoding.accessory(request.accessory, "accessory")
                let code = try SetupCode.digits(request.setupCode, field: "setup_code")
                try api.links.advertise(description, setupCode: code, on: call)
            } catch {
                call.fail(error.status)
            }
        }
        registry.registerServerStreaming(attach, request: Home_V1_AttachRequest.self) { call, request in
            let id: AccessoryID? = try? ProtoDecoding.id(request.accessoryID, "accessory_id")
            let bridged = request.bridgedAccessoryIds.compactMap {
                try? ProtoDecoding.id($0, "bridged_accessory_ids") as AccessoryID
            }
            // A client certificate mapped to an accessory binds the link to it: no other may attach here.
            if let subject = call.clientCertificateSubject, let bound = api.identities.accessories[subject], id != bound
            {
                call.fail(
                    CallStatus(
                        code: .permissionDenied,
                        message: "this connection's client certificate belongs to accessory \(bound), not to this one"
                    )
                )
                return
            }
            guard let id, api.links.attach(id, credential: request.credential, bridging: Set(bridged), on: call) else {
                call.fail(
                    CallStatus(
                        code: .unauthenticated,
                        message:
                            "no paired accessory has this id and credential (if it was removed, advertise it again)"
                    )
                )
                return
            }
        }
        registry.registerUnary(
            answerCommand,
            request: Home_V1_AnswerCommandRequest.self,
            shortcut: { call, bytes in
                guard let answer = CommandAnswer(bytes) else { return false }
                Self.answer(api, call, answer.commandID, hapStatus: answer.hapStatus, value: nil)
                return true
            },
            handler: { call, request in
                do throws(APIFailure) {
                    let value = request.hasValue ? try ProtoDecoding.value(request.value, "value") : nil
                    Self.answer(api, call, request.commandID, hapStatus: request.hapStatus, value: value)
                } catch {
                    call.fail(error.status)
                }
            }
        )
        registry.registerUnary(reportValues, request: Home_V1_ReportValuesRequest.self) { call, request in
            report(api, call, request)
        }
        registry.registerUnary(reportFirmwareVersion, request: Home_V1_ReportFirmwareVersionRequest.self) {
            call,
            request in
            do throws(APIFailure) {
                let id: AccessoryID = try ProtoDecoding.id(request.accessoryID, "accessory_id")
                let reporter = try linkAccessory(of: id, api, call, field: "accessory_id")
                let (result, ticket) = api.store.write {
                    () throws(APIFailure) -> Home_V1_ReportFirmwareVersionResponse in
                    try attempt(object: id.raw, field: "firmware_version") { () throws(HomeServiceError) in
                        try api.store.updateFirmwareVersion(id, to: request.firmwareVersion, by: reporter)
                    }
                    return Home_V1_ReportFirmwareVersionResponse()
                }
                api.reply(call, with: Outcome(result), after: ticket)
            } catch {
                call.fail(error.status)
            }
        }
    }

    /// Checks every report before applying any: all apply, in one commit, or none does.
    private static func report(_ api: HomeAPI, _ call: ServerCall, _ request: Home_V1_ReportValuesRequest) {
        var checked: [(id: CharacteristicID, value: CharacteristicValue, reporter: AccessoryID)] = []
        var items: [Home_V1_ItemResult] = []
        var firstFailure: APIFailure?
        for (index, report) in request.reports.enumerated() {
            var item = Home_V1_ItemResult()
            item.objectID = report.characteristicID
            do throws(APIFailure) {
                let id: CharacteristicID = try ProtoDecoding.id(
                    report.characteristicID,
                    "reports[\(index)].characteristic_id"
                )
                let value = try ProtoDecoding.value(report.value, "reports[\(index)].value")
                let owner = api.store.accessory(ofCharacteristic: id)
                guard let owner else {
                    throw APIFailure(
                        HomeServiceError(.notFound, "characteristic \(id) is not one of this connection's accessories"),
                        object: id.raw,
                        field: "reports[\(index)].characteristic_id"
                    )
                }
                let reporter = try linkAccessory(of: owner, api, call, field: "reports[\(index)].characteristic_id")
                _ = try attempt(object: id.raw, field: "reports[\(index)].value") { () throws(HomeServiceError) in
                    try api.store.checkReport(of: id, value, by: reporter)
                }
                checked.append((id, value, reporter))
            } catch {
                item.homekitCode = Int32(error.error.code.rawValue)
                item.message = error.error.message
                firstFailure = firstFailure ?? error
            }
            items.append(item)
        }
        if var failure = firstFailure {
            failure.items = items
            call.fail(failure.status)
            return
        }
        let (result, ticket) = api.store.write { () throws(APIFailure) -> Home_V1_ReportValuesResponse in
            for report in checked {
                try attempt(object: report.id.raw) { () throws(HomeServiceError) in
                    try api.store.reportValue(report.id, report.value, by: report.reporter)
                }
            }
            return Home_V1_ReportValuesResponse()
        }
        api.reply(call, with: Outcome(result), after: ticket)
    }

    /// The top-level accessory that speaks for `id`, if its link is on the caller's connection.
    /// - Throws: 2 otherwise (another connection's accessory looks the same as none).
    private static func linkAccessory(
        of id: AccessoryID,
        _ api: HomeAPI,
        _ call: ServerCall,
        field: String
    ) throws(APIFailure) -> AccessoryID {
        guard let top = api.store.linkAccessory(of: id), api.links.isAttached(top, on: call.connectionID) else {
            throw APIFailure(
                HomeServiceError(.notFound, "accessory \(id) is not attached through this connection"),
                object: id.raw,
                field: field
            )
        }
        return top
    }

    /// An accessory's answer to a command, however its request was decoded.
    private static func answer(
        _ api: HomeAPI,
        _ call: ServerCall,
        _ commandID: UInt64,
        hapStatus: Int32,
        value: CharacteristicValue?
    ) {
        do throws(APIFailure) {
            try api.links.answer(commandID, hapStatus: hapStatus, value: value, on: call.connectionID)
            // An `AnswerCommandResponse` has no fields: its encoding is empty, and answering every
            // command through the encoder cost 800 instructions.
            call.respond([])
        } catch {
            call.fail(error.status)
        }
    }
}
