/// Shares one copy of strings that repeat across many objects (type UUIDs, units), so half a million
/// characteristics do not carry half a million copies of a few dozen UUIDs.
final class StringInterner {
    private var strings: Set<String> = []

    func intern(_ string: String) -> String {
        if let existing = strings.firstIndex(of: string) { return strings[existing] }
        strings.insert(string)
        return string
    }
}
