/// The store's objects of one kind by id, stored densely: the objects sit in one array and a
/// dictionary maps each id to its position.
///
/// A dictionary of the objects themselves keeps each in a hash bucket, and buckets come in powers of
/// two at most three quarters full: at 100,000 accessories (500,000 characteristics) that was 2^18
/// buckets of 208 bytes for the accessories and 2^20 of 248 bytes for the characteristics, 320 MB in
/// all. Here only a 4-byte position is hashed by id. Freed positions are reused.
struct IDTable<Kind, Object> {
    private var positions: [ID<Kind>: Int32] = [:]
    /// `nil` at freed positions (Optional costs no space here: every stored type has spare bits).
    private var objects: [Object?] = []
    private var freePositions: [Int32] = []

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }

    /// Every object, in no particular order.
    var values: some Sequence<Object> { objects.lazy.compactMap { $0 } }

    /// The table as a dictionary, for comparing whole tables.
    var dictionary: [ID<Kind>: Object] { positions.mapValues { objects[Int($0)]! } }

    mutating func reserveCapacity(_ capacity: Int) {
        positions.reserveCapacity(capacity)
        objects.reserveCapacity(capacity)
    }

    /// A part of an object, read where it lies (the subscript's getter copies the whole object: an
    /// accessory's name cost a copy of the accessory).
    ///
    /// `mutating` though it changes nothing: a non-mutating call on a table stored in a class (the
    /// store's) copied the table first, retaining and releasing its three buffers, because the
    /// compiler cannot prove that `part` leaves the class alone; a mutating call works in place.
    mutating func read<Part, Failure>(_ id: ID<Kind>, _ part: (Object) throws(Failure) -> Part) throws(Failure) -> Part?
    {
        guard let position = positions[id] else { return nil }
        return try objects[Int(position)].map(part)
    }

    /// Changes an object where it lies; `nil` when there is none. The subscript's `_modify` does the
    /// same, but its coroutine's frame (the object moved out) outgrows the fixed buffer and is
    /// allocated at every change: a malloc and a free for each write of a hot path.
    mutating func update<Result>(_ id: ID<Kind>, _ body: (inout Object) -> Result) -> Result? {
        guard let position = positions[id] else { return nil }
        return body(&objects[Int(position)]!)
    }

    /// Where an object lies, to change it more than once in one step with one lookup of its id.
    /// Holds until the table's next insertion or removal.
    struct Slot {
        fileprivate let position: Int
    }

    /// The object's slot; `nil` when there is none.
    mutating func slot(of id: ID<Kind>) -> Slot? {
        positions[id].map { Slot(position: Int($0)) }
    }

    /// Changes the object in `slot` where it lies (see ``update(_:_:)``).
    mutating func update<Result>(at slot: Slot, _ body: (inout Object) -> Result) -> Result {
        body(&objects[slot.position]!)
    }

    /// Reads copy the object; changes through the subscript (`table[id]!.name = …`,
    /// `table[id]?.list.append(…)`) happen in place, and assigning `nil` removes it.
    subscript(id: ID<Kind>) -> Object? {
        get {
            guard let position = positions[id] else { return nil }
            return objects[Int(position)]
        }
        _modify {
            if let position = positions[id] {
                // Moved out, so that the caller's changes do not copy the object's arrays.
                var object = objects[Int(position)]
                objects[Int(position)] = nil
                defer {
                    if let object {
                        objects[Int(position)] = object
                    } else {
                        positions[id] = nil
                        freePositions.append(position)
                    }
                }
                yield &object
            } else {
                var object: Object? = nil
                defer {
                    if let object { insert(object, for: id) }
                }
                yield &object
            }
        }
    }

    /// Changes every object where it lies, in no particular order, without looking up any id.
    mutating func updateEach(_ body: (inout Object) -> Void) {
        for position in objects.indices where objects[position] != nil {
            body(&objects[position]!)
        }
    }

    /// Adds an object whose id the table does not hold yet (start-up's bulk placing: the
    /// subscript's `_modify` allocates its coroutine frame for each one).
    mutating func insert(_ object: Object, for id: ID<Kind>) {
        if let position = freePositions.popLast() {
            objects[Int(position)] = object
            positions[id] = position
        } else {
            positions[id] = Int32(objects.count)
            objects.append(object)
        }
    }
}

extension IDTable: Sendable where Object: Sendable {}
