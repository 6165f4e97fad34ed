/// A characteristic's type, properties and metadata. Characteristics of one type almost always share
/// all three, so the store keeps one instance per distinct combination (``CharacteristicKinds``) and
/// each characteristic holds a reference: half a million characteristics then cost a few dozen
/// copies of their metadata instead of half a million.
public final class CharacteristicKind: Hashable, Sendable {
    public struct Contents: Hashable, Sendable {
        /// The HAP type UUID (uppercase).
        public let type: String
        public let properties: CharacteristicProperties
        public let metadata: CharacteristicMetadata
    }

    public let contents: Contents
    /// Its number in the store (the `characteristic_kind` row).
    let number: Int32
    public var type: String { contents.type }
    public var properties: CharacteristicProperties { contents.properties }
    public var metadata: CharacteristicMetadata { contents.metadata }

    /// The catalog name for standard types, else the UUID: for messages.
    public var displayName: String { StandardCatalog.characteristicType(uuid: type)?.name ?? type }

    init(_ contents: Contents, number: Int32) {
        self.contents = contents
        self.number = number
    }

    public static func == (lhs: CharacteristicKind, rhs: CharacteristicKind) -> Bool {
        lhs === rhs || lhs.contents == rhs.contents
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(contents)
    }
}

/// The store's one instance of each distinct ``CharacteristicKind``, numbered as stored
/// (`characteristic_kind` rows; a characteristic row names its kind's number) and counted by use, so
/// that a kind goes (with its row) when its last characteristic does.
struct CharacteristicKinds: Sendable {
    private var byContents: [CharacteristicKind.Contents: CharacteristicKind] = [:]
    private var byNumber: [Int32: (kind: CharacteristicKind, uses: Int)] = [:]
    private var nextNumber: Int32 = 1

    var count: Int { byNumber.count }

    /// The kind stored under `number`, if there is one.
    func kind(number: Int32) -> CharacteristicKind? { byNumber[number]?.kind }

    /// Takes a stored kind (at load), unused until ``use(number:)``; `false` if its number or contents
    /// are already taken.
    mutating func restore(_ kind: CharacteristicKind) -> Bool {
        guard byNumber[kind.number] == nil, byContents[kind.contents] == nil else { return false }
        byNumber[kind.number] = (kind, 0)
        byContents[kind.contents] = kind
        nextNumber = max(nextNumber, kind.number &+ 1)
        return true
    }

    /// One more use of the stored kind `number` (a loaded characteristic); `nil` if there is none.
    mutating func use(number: Int32) -> CharacteristicKind? {
        guard let kind = byNumber[number]?.kind else { return nil }
        byNumber[number]!.uses += 1
        return kind
    }

    /// One more use of the kind with these contents; `isNew` when it did not exist (its row must be
    /// stored). `type` must already be uppercase.
    mutating func use(
        type: String,
        properties: CharacteristicProperties,
        metadata: CharacteristicMetadata
    ) -> (kind: CharacteristicKind, isNew: Bool) {
        let contents = CharacteristicKind.Contents(type: type, properties: properties, metadata: metadata)
        if let kind = byContents[contents] {
            byNumber[kind.number]!.uses += 1
            return (kind, false)
        }
        let kind = CharacteristicKind(contents, number: nextNumber)
        nextNumber += 1
        byContents[contents] = kind
        byNumber[kind.number] = (kind, 1)
        return (kind, true)
    }

    /// One use fewer; `true` when that was the last (the kind is gone and its row must be deleted).
    mutating func release(_ kind: CharacteristicKind) -> Bool {
        guard let uses = byNumber[kind.number]?.uses else { return false }
        guard uses <= 1 else {
            byNumber[kind.number]!.uses = uses - 1
            return false
        }
        byNumber[kind.number] = nil
        byContents[kind.contents] = nil
        return true
    }

    /// Forgets the kinds no characteristic uses and returns their numbers (rows left by a crash
    /// between a kind's last use and its deletion).
    mutating func removeUnused() -> [Int32] {
        let unused = byNumber.filter { $0.value.uses == 0 }
        for (number, entry) in unused {
            byNumber[number] = nil
            byContents[entry.kind.contents] = nil
        }
        return Array(unused.keys)
    }
}
