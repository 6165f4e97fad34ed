import RPCClient
public import SwiftProtobuf
import Wire

/// Protobuf messages over an ``RPCClient``: encoding, the call, decoding, failures as
/// ``HomeClientError``. Shared by the controller client and the accessory link.
enum ProtoCall {
    static func encode(_ message: some SwiftProtobuf.Message) throws(HomeClientError) -> [UInt8] {
        do {
            return try message.serializedBytes()
        } catch {
            throw HomeClientError(
                status: .invalidArgument,
                message: "cannot encode \(type(of: message).protoMessageName): \(error)"
            )
        }
    }

    static func decode<Message: SwiftProtobuf.Message>(
        _ bytes: [UInt8],
        as: Message.Type
    ) throws(HomeClientError)
        -> Message
    {
        do {
            return try Message(serializedBytes: bytes)
        } catch {
            throw HomeClientError(status: .internal, message: "cannot decode \(Message.protoMessageName): \(error)")
        }
    }

    static func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ rpc: RPCClient,
        _ method: String,
        _ request: Request,
        returning: Response.Type = Response.self,
        timeout: Duration?,
        metadata: [MetadataEntry]
    ) async throws(HomeClientError) -> Response {
        let bytes = try encode(request)
        let answer: [UInt8]
        do {
            answer = try await rpc.unary(method, request: bytes, timeout: timeout, metadata: metadata)
        } catch {
            throw HomeClientError(error)
        }
        return try decode(answer, as: Response.self)
    }
}

/// The decoded messages of a server stream. Iterate it once; dropping it cancels the call.
public struct MessageStream<Message: SwiftProtobuf.Message & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Message

    let stream: ResponseStream

    public func makeAsyncIterator() -> Iterator {
        Iterator(inner: stream.makeAsyncIterator())
    }

    /// Delivers the stream's messages, one per iteration of the sequence.
    public struct Iterator: AsyncIteratorProtocol {
        var inner: ResponseStream.AsyncIterator

        /// The next message; `nil` once the stream ended with OK.
        /// - Throws: `CancellationError` when the task was cancelled (the call is cancelled on the
        ///   server too); ``HomeClientError`` with the status it ended with otherwise.
        public mutating func next() async throws -> Message? {
            let bytes: [UInt8]?
            do {
                bytes = try await inner.next()
            } catch let error as RPCError {
                try Task.checkCancellation()
                throw HomeClientError(error)
            }
            guard let bytes else { return nil }
            return try ProtoCall.decode(bytes, as: Message.self)
        }
    }
}
