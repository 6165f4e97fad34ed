/// The names of one home's objects (rooms, zones, accessories, services, service groups, action
/// sets, triggers), by comparison key, so that a new or renamed object can be checked against all of
/// them at once. The home's own name is not in it: the home checks that itself, and the home's
/// built-in room and action sets keep their names even when the home is named like one of them.
///
/// A key usually has one holder. It has several only where HomeKit lets names repeat: an
/// accessory's services take the accessory's name (or their advertised one) when it is added.
/// Removing a holder removes only that holder, so a name stays taken while anyone still holds it.
struct HomeNamespace {
    private var holders: [String: NameHolder] = [:]
    /// Further holders of keys that already have one in `holders` (rare).
    private var sharedHolders: [String: [NameHolder]] = [:]

    /// Records that `holder` holds its name.
    mutating func insert(_ holder: NameHolder) {
        let key = NameRules.comparisonKey(holder.name)
        if holders[key] == nil {
            holders[key] = holder
        } else {
            sharedHolders[key, default: []].append(holder)
        }
    }

    /// Releases the name `name` held by object `id` (others holding the same name keep it).
    mutating func remove(_ name: String, heldBy id: UniqueIdentifier) {
        let key = NameRules.comparisonKey(name)
        if holders[key]?.id == id {
            if var others = sharedHolders[key], !others.isEmpty {
                holders[key] = others.removeFirst()
                sharedHolders[key] = others.isEmpty ? nil : others
            } else {
                holders[key] = nil
            }
        } else {
            sharedHolders[key]?.removeAll { $0.id == id }
            if sharedHolders[key]?.isEmpty == true { sharedHolders[key] = nil }
        }
    }

    /// Someone who holds a name similar to `name`, other than the objects in `allowed`.
    func holder(of name: String, except allowed: Set<UniqueIdentifier> = []) -> NameHolder? {
        let key = NameRules.comparisonKey(name)
        guard let first = holders[key] else { return nil }
        if !allowed.contains(first.id) { return first }
        return sharedHolders[key]?.first { !allowed.contains($0.id) }
    }
}

/// Who holds a name in a home's namespace.
struct NameHolder: Hashable {
    let id: UniqueIdentifier
    /// "room", "zone", "accessory"...
    let kind: String
    let name: String
}
