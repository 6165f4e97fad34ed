extension Dictionary {
    /// Runs `body` on the value stored for `key`, in its slot, and returns its result; `nil` when
    /// there is no such key. `dictionary[key]?.mutate()` moves the value out into an Optional and back
    /// through unspecialised value witnesses: about 1,600 instructions per call for a home, a
    /// counter bump on the path of every change.
    @inline(__always)
    mutating func mutateValue<Result>(forKey key: Key, _ body: (inout Value) -> Result) -> Result? {
        guard let index = index(forKey: key) else { return nil }
        return body(&values[index])
    }
}
