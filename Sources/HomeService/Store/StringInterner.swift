/// Shares one copy of strings that repeat across many objects (type UUIDs, units), so half a million
/// characteristics do not carry half a million copies of a few dozen UUIDs.
///
/// A value, so that start-up can fill one on a thread of its own and hand it to the store.
struct StringInterner: Sendable {
    private var strings: Set<String> = []

    mutating func intern(_ string: String) -> String {
        if let existing = strings.firstIndex(of: string) { return strings[existing] }
        strings.insert(string)
        return string
    }
}
