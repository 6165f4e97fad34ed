import Logging
import UV
import Wire

/// What a connection logs of its calls: each call's end at debug, a server fault at warning, and
/// refusals with the metrics.
extension ServedConnection {
    /// A call's log line, carrying the client's `trace-id` so that the two sides' logs meet: every
    /// call at debug (`homed --log-level debug`), a server fault at warning whatever the level.
    func logEnd(of call: ServerCall, _ code: StatusCode, _ message: String) {
        var metadata: Logger.Metadata = [
            "method": "\(server.methodNames[call.methodIndex])", "status": "\(code)",
            "connection": "\(id)", "stream": "\(call.streamID.rawValue)",
            "µs": "\((EventLoop.monotonicNanoseconds &- call.startedAt) / 1000)",
        ]
        if let traceID = call.traceID { metadata["trace-id"] = "\(traceID)" }
        if !message.isEmpty { metadata["message"] = "\(message)" }
        server.logger.log(level: Self.isServerFault(code) ? .warning : .debug, "call ended", metadata: metadata)
    }

    func recordRefusal(_ streamID: StreamID, _ status: CallStatus) {
        server.metrics.recordRefusal(status.code)
        guard server.logsEveryCall else { return }
        server.logger.debug(
            "call refused",
            metadata: [
                "status": "\(status.code)", "connection": "\(id)", "stream": "\(streamID.rawValue)",
                "message": "\(status.message)",
            ]
        )
    }

    /// A fault of the server's own, not of the request or the moment: logged at every level.
    static func isServerFault(_ code: StatusCode) -> Bool { code == .internal || code == .dataLoss }
}
