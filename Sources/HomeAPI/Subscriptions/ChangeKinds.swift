import HomeService

/// A set of change kinds as one 64-bit mask (every raw value is below 64). A subscription tests
/// its kinds on every delivery; a `Set` hashed the kind each time.
struct ChangeKinds: Sendable, Equatable {
    private var mask: UInt64 = 0

    init() {}

    init(_ kinds: some Sequence<ChangeKind>) {
        for kind in kinds { insert(kind) }
    }

    mutating func insert(_ kind: ChangeKind) {
        mask |= Self.bit(kind)
    }

    func contains(_ kind: ChangeKind) -> Bool {
        mask & Self.bit(kind) != 0
    }

    private static func bit(_ kind: ChangeKind) -> UInt64 {
        precondition(kind.rawValue < 64, "ChangeKinds holds raw values below 64")
        return 1 << UInt64(kind.rawValue)
    }
}
