public import HomeProto
public import HomeService
import Wire

/// A call's failure with what the caller needs to find its cause: the HomeKit error, the object it
/// concerns and the request field that carried the bad input.
public struct APIFailure: Error, Sendable {
    public var error: HomeServiceError
    public var object: UniqueIdentifier?
    public var field: String
    public var items: [Home_V1_ItemResult]

    public init(
        _ error: HomeServiceError,
        object: UniqueIdentifier? = nil,
        field: String = "",
        items: [Home_V1_ItemResult] = []
    ) {
        self.error = error
        self.object = object
        self.field = field
        self.items = items
    }

    /// A bad request field (3 InvalidParameter unless said otherwise).
    static func invalid(_ field: String, _ message: String, _ code: HomeKitErrorCode = .invalidParameter) -> APIFailure
    {
        APIFailure(HomeServiceError(code, message), field: field)
    }

    var status: CallStatus {
        HomeKitStatus.status(for: error, object: object, field: field, items: items)
    }
}

/// Runs a store call and gives its failure the request's context.
@inline(__always)
func attempt<T: ~Copyable>(
    object: UniqueIdentifier? = nil,
    field: String = "",
    _ body: () throws(HomeServiceError) -> T
) throws(APIFailure) -> T {
    do {
        return try body()
    } catch {
        throw APIFailure(error, object: object, field: error.field ?? field)
    }
}

extension Result where Failure == HomeServiceError {
    /// The value, or the failure about `object`.
    func get(object: UniqueIdentifier) throws(APIFailure) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let error): throw APIFailure(error, object: object)
        }
    }
}
