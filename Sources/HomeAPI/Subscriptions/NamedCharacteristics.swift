import HomeService

/// The characteristics a subscription named for value events, tested on every value delivery. A
/// few are compared one by one (two words each), which costs less than hashing the id; more go in a
/// set.
struct NamedCharacteristics {
    static let listedAtMost = 8

    private let few: [CharacteristicID]
    private let many: Set<CharacteristicID>

    init(_ ids: Set<CharacteristicID>) {
        if ids.count <= Self.listedAtMost {
            few = Array(ids)
            many = []
        } else {
            few = []
            many = ids
        }
    }

    var isEmpty: Bool { few.isEmpty && many.isEmpty }

    /// The memory the ids take, about (a request of up to a frame names them, and the stream holds
    /// them for its life).
    var heldBytes: Int { (few.capacity + many.capacity) * MemoryLayout<CharacteristicID>.stride }

    func contains(_ id: CharacteristicID) -> Bool {
        many.isEmpty ? few.contains(id) : many.contains(id)
    }
}
