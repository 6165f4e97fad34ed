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
    public var type: String { contents.type }
    public var properties: CharacteristicProperties { contents.properties }
    public var metadata: CharacteristicMetadata { contents.metadata }

    init(_ contents: Contents) {
        self.contents = contents
    }

    public static func == (lhs: CharacteristicKind, rhs: CharacteristicKind) -> Bool {
        lhs === rhs || lhs.contents == rhs.contents
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(contents)
    }
}

/// The store's one instance of each distinct ``CharacteristicKind``.
final class CharacteristicKinds {
    private var kinds: [CharacteristicKind.Contents: CharacteristicKind] = [:]
    private let strings: StringInterner

    init(strings: StringInterner) {
        self.strings = strings
    }

    /// The shared kind for these contents; `type` must already be uppercase.
    func kind(
        type: String,
        properties: CharacteristicProperties,
        metadata: CharacteristicMetadata
    ) -> CharacteristicKind {
        let contents = CharacteristicKind.Contents(type: type, properties: properties, metadata: metadata)
        if let kind = kinds[contents] { return kind }
        let kind = CharacteristicKind(
            .init(type: strings.intern(type), properties: properties, metadata: metadata)
        )
        kinds[kind.contents] = kind
        return kind
    }
}
