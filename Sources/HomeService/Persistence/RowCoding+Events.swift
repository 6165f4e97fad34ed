internal import SQLite

/// A home's change events as stored: `event_batch` rows (a commit's events of a home in one row),
/// and the row per event of schema versions 1 to 5 that migration 6 reads.
extension RowCoding {
    /// One `event_batch` row: `changes`, events of one home with consecutive revisions in order,
    /// encoded back to back (``encodeEvents(_:)``).
    static func eventBatch(_ changes: ArraySlice<HomeChange>) -> [SQLValue] {
        let first = changes.first!
        let last = changes.last!
        return [
            .id(first.home), .integer(Int64(first.revision)), .integer(Int64(last.revision)),
            .blob(encodeEvents(changes)),
        ]
    }

    /// Each event: its revision's step from the one before (1: a home's revisions have no gaps;
    /// the first's is from `first_revision - 1`), its time's step (zigzag; the first's from 0), its
    /// initiator (tag 0: the same as the event before; 1 account or 2 accessory and its id; 3 the
    /// server), then its body (``writeBody(of:into:)``, which delimits itself). About 45 bytes for a
    /// value update; a row of its own per event cost the writer an SQLite insert each.
    static func encodeEvents(_ changes: ArraySlice<HomeChange>) -> [UInt8] {
        var writer = ByteWriter(capacity: 48 * changes.count)
        var revision = changes.first!.revision - 1
        var time: Int64 = 0
        var initiator: Initiator?
        for change in changes {
            writer.writeVarint(change.revision &- revision)
            writer.writeVarint(zigzag(change.time &- time))
            revision = change.revision
            time = change.time
            if change.initiator == initiator {
                writer.writeByte(0)
            } else {
                writeInitiator(change.initiator, into: &writer)
                initiator = change.initiator
            }
            writeBody(of: change, into: &writer)
        }
        return writer.bytes
    }

    /// The events of an `event_batch` row, checked against its revision range.
    static func changes(inBatch row: any StoredRow) throws(StoreError) -> [HomeChange] {
        var reader = RowReader(row, StoreSchema.eventBatch)
        let home: HomeID = try reader.id()
        guard let first = UInt64(exactly: try reader.integer()), let last = UInt64(exactly: try reader.integer()),
            first > 0, first <= last
        else {
            throw .corrupt("an event batch of home \(home) has a bad revision range")
        }
        var bytes = ByteReader(try reader.blob())
        var changes: [HomeChange] = []
        // Bounded: a corrupt range must not ask for an impossible allocation.
        changes.reserveCapacity(Int(min(last - first + 1, UInt64(EventBatches.maxEventsPerBatch))))
        var revision = first - 1
        var time: Int64 = 0
        var initiator: Initiator?
        while !bytes.isAtEnd {
            revision &+= try bytes.readVarint()
            time &+= unzigzag(try bytes.readVarint())
            let tag = try bytes.readByte()
            if tag != 0 {
                initiator = try readInitiator(tagged: tag, from: &bytes, event: revision, of: home)
            } else if initiator == nil {
                throw .corrupt("event \(revision) of home \(home) has no initiator")
            }
            let event = try readEvent(from: &bytes)
            changes.append(HomeChange(home: home, revision: revision, time: time, initiator: initiator!, event: event))
        }
        guard changes.first?.revision == first, revision == last else {
            throw .corrupt("the event batch of home \(home) from \(first) to \(last) holds events to \(revision)")
        }
        return changes
    }

    /// An event row of schema versions 1 to 5, one row per event (read only by migration 6).
    static func legacyChange(_ row: any StoredRow) throws(StoreError) -> HomeChange {
        var reader = RowReader(row, StoreSchema.legacyEvent)
        let home: HomeID = try reader.id()
        guard let revision = UInt64(exactly: try reader.integer()) else {
            throw .corrupt("an event of home \(home) has a negative revision")
        }
        let time = try reader.integer()
        var initiatorBytes = ByteReader(try reader.blob())
        let tag = try initiatorBytes.readByte()
        let initiator = try readInitiator(tagged: tag, from: &initiatorBytes, event: revision, of: home)
        var body = ByteReader(try reader.blob())
        let event = try readEvent(from: &body)
        return HomeChange(home: home, revision: revision, time: time, initiator: initiator, event: event)
    }

    /// ``legacyChange(_:)``'s row: how versions 1 to 5 stored an event (to write an older file in
    /// tests of migration 6).
    static func legacyRow(_ change: HomeChange) -> [SQLValue] {
        var initiator = ByteWriter(capacity: 17)
        writeInitiator(change.initiator, into: &initiator)
        var body = ByteWriter(capacity: 48)
        writeBody(of: change, into: &body)
        return [
            .id(change.home), .integer(Int64(change.revision)), .integer(change.time), .blob(initiator.bytes),
            .blob(body.bytes),
        ]
    }

    /// A tag (1 account, 2 accessory, 3 the server), then the id if it has one.
    private static func writeInitiator(_ initiator: Initiator, into writer: inout ByteWriter) {
        switch initiator {
        case .account(let account):
            writer.writeByte(1)
            writer.writeID(account.raw)
        case .accessory(let accessory):
            writer.writeByte(2)
            writer.writeID(accessory.raw)
        case .server:
            writer.writeByte(3)
        }
    }

    private static func readInitiator(
        tagged tag: UInt8,
        from reader: inout ByteReader,
        event revision: UInt64,
        of home: HomeID
    ) throws(StoreError) -> Initiator {
        switch tag {
        case 1: return .account(AccountID(try reader.readID()))
        case 2: return .accessory(AccessoryID(try reader.readID()))
        case 3: return .server
        default: throw .corrupt("event \(revision) of home \(home) has initiator tag \(tag)")
        }
    }

    private static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    private static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The kind, field presence bits, then the present fields in order.
    /// Reads the change's event field by field: taking the event as a value copied it (retaining
    /// its name and value) for every event a commit writes.
    private static func writeBody(of change: HomeChange, into writer: inout ByteWriter) {
        writer.writeByte(change.event.kind.rawValue)
        var present: UInt8 = 0
        if change.event.object != nil { present |= 1 }
        if change.event.container != nil { present |= 2 }
        if change.event.name != nil { present |= 4 }
        if change.event.value != nil { present |= 8 }
        if change.event.flag != nil { present |= 16 }
        writer.writeByte(present)
        if let object = change.event.object { writer.writeID(object) }
        if let container = change.event.container { writer.writeID(container) }
        if let name = change.event.name { writer.writeString(name) }
        if let value = change.event.value { writer.writeValue(value) }
        if let flag = change.event.flag { writer.writeByte(flag ? 1 : 0) }
    }

    private static func readEvent(from reader: inout ByteReader) throws(StoreError) -> ChangeEvent {
        let rawKind = try reader.readByte()
        guard let kind = ChangeKind(rawValue: rawKind) else { throw .corrupt("unknown event kind \(rawKind)") }
        let present = try reader.readByte()
        var event = ChangeEvent(kind)
        if present & 1 != 0 { event.object = try reader.readID() }
        if present & 2 != 0 { event.container = try reader.readID() }
        if present & 4 != 0 { event.name = try reader.readString() }
        if present & 8 != 0 { event.value = try reader.readValue() }
        if present & 16 != 0 { event.flag = try reader.readByte() != 0 }
        return event
    }
}
