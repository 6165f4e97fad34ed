internal import SQLite

/// Model records to stored rows and back, column for column as ``StoreSchema`` lists them.
enum RowCoding {
    /// Where the value and its time sit in a characteristic row.
    static let characteristicValueColumn = StoreSchema.characteristic.columns.firstIndex(of: "value")!
    /// Where the reachability sits in an accessory row.
    static let accessoryReachableColumn = StoreSchema.accessory.columns.firstIndex(of: "is_reachable")!

    static func row(_ account: Account) -> [SQLValue] {
        [
            .id(account.id), .text(account.name), .bool(account.isOwner), .optionalID(account.primaryHome),
            .integer(account.createdAt), .integer(account.sequence),
        ]
    }

    static func account(_ row: any StoredRow) throws(StoreError) -> Account {
        var reader = RowReader(row, StoreSchema.account)
        return Account(
            id: try reader.id(),
            name: try reader.text(),
            isOwner: try reader.bool(),
            primaryHome: try reader.optionalID(),
            createdAt: try reader.integer(),
            sequence: try reader.integer()
        )
    }

    static func row(_ token: AccessToken) -> [SQLValue] {
        [
            .id(token.id), .id(token.account), .blob(token.hash), .integer(token.createdAt), .integer(token.sequence),
            .text(token.name), .text(token.limits.scope.name),
            token.limits.homes.map { .idList($0.sorted()) } ?? .null,
            .optionalInteger(token.limits.expiresAt), .integer(token.lastUsedAt),
        ]
    }

    static func token(_ row: any StoredRow) throws(StoreError) -> AccessToken {
        var reader = RowReader(row, StoreSchema.token)
        let id: AccessTokenID = try reader.id()
        let account: AccountID = try reader.id()
        let hash = try reader.blob()
        let createdAt = try reader.integer()
        let sequence = try reader.integer()
        let name = try reader.text()
        let scopeName = try reader.text()
        guard let scope = TokenScope(name: scopeName) else { throw .corrupt("token scope \"\(scopeName)\"") }
        let homes: [HomeID]? = try reader.optionalBlob().map { bytes throws(StoreError) in
            try [UniqueIdentifier](storedBytes: bytes).map(HomeID.init)
        }
        var token = AccessToken(
            id: id,
            account: account,
            hash: hash,
            createdAt: createdAt,
            sequence: sequence,
            name: name,
            limits: TokenLimits(scope: scope, homes: homes.map(Set.init), expiresAt: try reader.optionalInteger())
        )
        token.lastUsedAt = try reader.integer()
        return token
    }

    static func row(_ home: Home) -> [SQLValue] {
        [
            .id(home.id), .text(home.name), .id(home.owner), .id(home.roomForEntireHome),
            .integer(Int64(home.revision)), .integer(home.sequence), .text(home.timeZone),
        ]
    }

    /// A home without its members and objects, which load adds from their own tables.
    static func home(_ row: any StoredRow) throws(StoreError) -> Home {
        var reader = RowReader(row, StoreSchema.home)
        var home = Home(
            id: try reader.id(),
            name: try reader.text(),
            owner: try reader.id(),
            roomForEntireHome: try reader.id(),
            members: [:],
            revision: UInt64(clamping: try reader.integer()),
            sequence: try reader.integer()
        )
        home.timeZone = try reader.text()
        return home
    }

    static func memberRow(home: HomeID, account: AccountID, role: HomeRole) -> [SQLValue] {
        [.id(home), .id(account), .text(role.rawValue)]
    }

    static func member(_ row: any StoredRow) throws(StoreError) -> (HomeID, AccountID, HomeRole) {
        var reader = RowReader(row, StoreSchema.member)
        let home: HomeID = try reader.id()
        let account: AccountID = try reader.id()
        let role = try reader.text()
        guard let parsed = HomeRole(rawValue: role) else { throw .corrupt("member role \"\(role)\"") }
        return (home, account, parsed)
    }

    static func row(_ room: Room) -> [SQLValue] {
        [.id(room.id), .id(room.home), .text(room.name), .integer(room.sequence)]
    }

    static func room(_ row: any StoredRow) throws(StoreError) -> Room {
        var reader = RowReader(row, StoreSchema.room)
        return Room(id: try reader.id(), home: try reader.id(), name: try reader.text(), sequence: try reader.integer())
    }

    static func row(_ zone: Zone) -> [SQLValue] {
        [.id(zone.id), .id(zone.home), .text(zone.name), .idList(zone.rooms), .integer(zone.sequence)]
    }

    static func zone(_ row: any StoredRow) throws(StoreError) -> Zone {
        var reader = RowReader(row, StoreSchema.zone)
        return Zone(
            id: try reader.id(),
            home: try reader.id(),
            name: try reader.text(),
            rooms: try reader.idList(),
            sequence: try reader.integer()
        )
    }

    static func row(_ accessory: Accessory) -> [SQLValue] {
        [
            .id(accessory.id), .id(accessory.home), .text(accessory.name), .id(accessory.room),
            .integer(Int64(accessory.category)), .text(accessory.manufacturer), .text(accessory.model),
            .text(accessory.firmwareVersion), .bool(accessory.supportsIdentify), .optionalID(accessory.bridge),
            .bool(accessory.isBlocked), .bool(accessory.isReachable), .integer(accessory.sequence),
            accessory.credentialHash.map { .blob($0) } ?? .null,
        ]
    }

    /// An accessory without its services and bridged accessories, which load links from their rows.
    static func accessory(_ row: any StoredRow) throws(StoreError) -> Accessory {
        var reader = RowReader(row, StoreSchema.accessory)
        let id: AccessoryID = try reader.id()
        let home: HomeID = try reader.id()
        let name = try reader.text()
        let room: RoomID = try reader.id()
        let category = Int(try reader.integer())
        let manufacturer = try reader.text()
        let model = try reader.text()
        let firmwareVersion = try reader.text()
        let supportsIdentify = try reader.bool()
        let bridge: AccessoryID? = try reader.optionalID()
        let isBlocked = try reader.bool()
        let isReachable = try reader.bool()
        let sequence = try reader.integer()
        return Accessory(
            id: id,
            home: home,
            name: name,
            room: room,
            category: category,
            manufacturer: manufacturer,
            model: model,
            firmwareVersion: firmwareVersion,
            supportsIdentify: supportsIdentify,
            bridge: bridge,
            bridgedAccessories: [],
            isBlocked: isBlocked,
            isReachable: isReachable,
            services: [],
            credentialHash: try reader.optionalBlob(),
            sequence: sequence
        )
    }

    static func row(_ service: Service) -> [SQLValue] {
        [
            .id(service.id), .id(service.accessory), .id(service.home), .text(service.type), .text(service.name),
            .bool(service.isPrimary), .bool(service.isUserInteractive), .optionalText(service.associatedServiceType),
            .idList(service.linkedServices), .integer(service.sequence),
        ]
    }

    /// A service without its characteristics, which load links from their rows.
    static func service(_ row: any StoredRow, intern: (String) -> String) throws(StoreError) -> Service {
        var reader = RowReader(row, StoreSchema.service)
        return Service(
            id: try reader.id(),
            accessory: try reader.id(),
            home: try reader.id(),
            type: intern(try reader.text()),
            name: try reader.text(),
            isPrimary: try reader.bool(),
            isUserInteractive: try reader.bool(),
            associatedServiceType: try reader.optionalText(),
            linkedServices: try reader.idList(),
            characteristics: [],
            sequence: try reader.integer()
        )
    }

    static func row(_ kind: CharacteristicKind) -> [SQLValue] {
        let metadata = kind.metadata
        return [
            .integer(Int64(kind.number)), .text(kind.type), .integer(Int64(kind.properties.rawValue)),
            .text(metadata.format.rawValue), .optionalText(metadata.units), .optionalReal(metadata.minimumValue),
            .optionalReal(metadata.maximumValue), .optionalReal(metadata.stepValue),
            .optionalInteger(metadata.maxLength.map(Int64.init)), .optionalInteger(metadata.minLength.map(Int64.init)),
            metadata.validValues.map { .blob(integerList($0)) } ?? .null,
            .optionalText(metadata.manufacturerDescription),
        ]
    }

    static func characteristicKind(_ row: any StoredRow) throws(StoreError) -> CharacteristicKind {
        var reader = RowReader(row, StoreSchema.characteristicKind)
        let storedNumber = try reader.integer()
        guard let number = Int32(exactly: storedNumber), number > 0 else {
            throw .corrupt("characteristic kind number \(storedNumber)")
        }
        let type = try reader.text()
        let properties = CharacteristicProperties(rawValue: UInt8(truncatingIfNeeded: try reader.integer()))
        let formatName = try reader.text()
        guard let format = CharacteristicFormat(rawValue: formatName) else {
            throw .corrupt("characteristic kind \(number) has format \"\(formatName)\"")
        }
        let metadata = CharacteristicMetadata(
            format: format,
            units: try reader.optionalText(),
            minimumValue: try reader.optionalReal(),
            maximumValue: try reader.optionalReal(),
            stepValue: try reader.optionalReal(),
            maxLength: try reader.optionalInteger().map(Int.init),
            minLength: try reader.optionalInteger().map(Int.init),
            validValues: try reader.optionalBlob().map(integers),
            manufacturerDescription: try reader.optionalText()
        )
        return CharacteristicKind(.init(type: type, properties: properties, metadata: metadata), number: number)
    }

    static func row(_ characteristic: Characteristic, _ entry: CharacteristicCache.Entry) -> [SQLValue] {
        [
            .id(characteristic.id), .id(characteristic.service), .id(characteristic.accessory),
            .id(characteristic.home), .integer(Int64(characteristic.kind.number)), value(entry.value),
            .integer(entry.updatedAt), .integer(characteristic.sequence),
        ]
    }

    /// A characteristic's row, decoded; `kinds` gives its shared kind (one more use of it), `slot`
    /// places its value in the cache.
    static func characteristic(
        _ row: any StoredRow,
        kinds: inout CharacteristicKinds,
        slot: (CharacteristicCache.Entry) -> CharacteristicCache.Slot
    ) throws(StoreError) -> Characteristic {
        var reader = RowReader(row, StoreSchema.characteristic)
        let id: CharacteristicID = try reader.id()
        let service: ServiceID = try reader.id()
        let accessory: AccessoryID = try reader.id()
        let home: HomeID = try reader.id()
        let number = try reader.integer()
        guard let kind = Int32(exactly: number).flatMap({ kinds.use(number: $0) }) else {
            throw .corrupt("characteristic \(id) has kind \(number), which does not exist")
        }
        let value = try reader.optionalBlob().map(decodeValue)
        let entry = CharacteristicCache.Entry(value: value, updatedAt: try reader.integer())
        return Characteristic(
            id: id,
            service: service,
            accessory: accessory,
            home: home,
            kind: kind,
            slot: slot(entry),
            sequence: try reader.integer()
        )
    }

    static func row(_ group: ServiceGroup) -> [SQLValue] {
        [.id(group.id), .id(group.home), .text(group.name), .idList(group.services), .integer(group.sequence)]
    }

    static func serviceGroup(_ row: any StoredRow) throws(StoreError) -> ServiceGroup {
        var reader = RowReader(row, StoreSchema.serviceGroup)
        return ServiceGroup(
            id: try reader.id(),
            home: try reader.id(),
            name: try reader.text(),
            services: try reader.idList(),
            sequence: try reader.integer()
        )
    }

    static func row(_ actionSet: ActionSet) -> [SQLValue] {
        // Two ids and a short value an action, reserved at once rather than grown from empty on
        // every change of the set.
        var actions = ByteWriter(capacity: actionSet.actions.count * 48)
        for action in actionSet.actions {
            actions.writeID(action.id.raw)
            actions.writeID(action.characteristic.raw)
            actions.writeValue(action.targetValue)
        }
        return [
            .id(actionSet.id), .id(actionSet.home), .text(actionSet.name), .integer(Int64(actionSet.kind.rawValue)),
            .blob(actions.bytes), .optionalInteger(actionSet.lastExecutionDate), .integer(actionSet.sequence),
        ]
    }

    static func actionSet(_ row: any StoredRow) throws(StoreError) -> ActionSet {
        var reader = RowReader(row, StoreSchema.actionSet)
        let id: ActionSetID = try reader.id()
        let home: HomeID = try reader.id()
        let name = try reader.text()
        guard let kind = ActionSet.Kind(rawValue: Int(try reader.integer())) else {
            throw .corrupt("action set \(id) has an unknown kind")
        }
        var bytes = ByteReader(try reader.blob())
        var actions: [CharacteristicWriteAction] = []
        while !bytes.isAtEnd {
            actions.append(
                CharacteristicWriteAction(
                    id: ActionID(try bytes.readID()),
                    characteristic: CharacteristicID(try bytes.readID()),
                    targetValue: try bytes.readValue()
                )
            )
        }
        return ActionSet(
            id: id,
            home: home,
            name: name,
            kind: kind,
            actions: actions,
            lastExecutionDate: try reader.optionalInteger(),
            sequence: try reader.integer()
        )
    }

    static func row(_ trigger: TimerTrigger) -> [SQLValue] {
        [
            .id(trigger.id), .id(trigger.home), .text(trigger.name), .bool(trigger.isEnabled),
            .integer(trigger.fireDate), .optionalInteger(trigger.recurrence?.count), .idList(trigger.actionSets),
            .optionalInteger(trigger.lastFireDate), .integer(trigger.sequence),
            .optionalText(trigger.recurrence?.unit.rawValue),
        ]
    }

    static func timerTrigger(_ row: any StoredRow) throws(StoreError) -> TimerTrigger {
        var reader = RowReader(row, StoreSchema.timerTrigger)
        let id: TriggerID = try reader.id()
        let home: HomeID = try reader.id()
        let name = try reader.text()
        let isEnabled = try reader.bool()
        let fireDate = try reader.integer()
        let count = try reader.optionalInteger()
        let actionSets: [ActionSetID] = try reader.idList()
        let lastFireDate = try reader.optionalInteger()
        let sequence = try reader.integer()
        let unit = try reader.optionalText()
        var recurrence: TriggerRecurrence?
        if let count {
            guard let unit, let parsed = TriggerRecurrence.Unit(rawValue: unit) else {
                throw .corrupt("trigger \(id) has recurrence \(count) in unit \(unit ?? "none")")
            }
            recurrence = TriggerRecurrence(count, parsed)
        }
        return TimerTrigger(
            id: id,
            home: home,
            name: name,
            isEnabled: isEnabled,
            fireDate: fireDate,
            recurrence: recurrence,
            actionSets: actionSets,
            lastFireDate: lastFireDate,
            sequence: sequence
        )
    }

    /// An `idempotency_batch` row: the account's records in the order they were made, each its
    /// key, request digest, outcome and creation time.
    /// - Parameter byteCount: about how many bytes they take (reserved at once).
    static func idempotencyRow(
        _ number: Int64,
        _ account: AccountID,
        _ records: some Sequence<HomeStore.IdempotencyRecord>,
        byteCount: Int
    ) -> [SQLValue] {
        var writer = ByteWriter(capacity: byteCount)
        for record in records {
            writer.writeString(record.key)
            writer.writeUInt64(UInt64(record.requestDigest.count))
            writer.writeBytes(record.requestDigest)
            writer.writeUInt64(UInt64(record.outcome.count))
            writer.writeBytes(record.outcome)
            writer.writeUInt64(UInt64(bitPattern: record.createdAt))
        }
        return [.integer(number), .id(account), .blob(writer.bytes)]
    }

    /// Reads an `idempotency_batch` row.
    static func idempotencyBatch(
        _ row: any StoredRow
    ) throws(StoreError) -> (number: Int64, account: AccountID, records: [HomeStore.IdempotencyRecord]) {
        var reader = RowReader(row, StoreSchema.idempotencyBatch)
        let number = try reader.integer()
        let account: AccountID = try reader.id()
        var bytes = ByteReader(try reader.blob())
        var records: [HomeStore.IdempotencyRecord] = []
        while !bytes.isAtEnd {
            records.append(
                HomeStore.IdempotencyRecord(
                    account: account,
                    key: try bytes.readString(),
                    requestDigest: try bytes.readBytes(),
                    outcome: try bytes.readBytes(),
                    createdAt: Int64(bitPattern: try bytes.readUInt64()),
                    ticket: CommitTicket(batch: 0),
                    row: number
                )
            )
        }
        return (number, account, records)
    }

    /// Reads a row of the `idempotency_key` table of versions 3 to 7.
    static func legacyIdempotencyRecord(_ row: any StoredRow) throws(StoreError) -> HomeStore.IdempotencyRecord {
        var reader = RowReader(row, StoreSchema.legacyIdempotencyKey)
        return HomeStore.IdempotencyRecord(
            account: try reader.id(),
            key: try reader.text(),
            requestDigest: try reader.blob(),
            outcome: try reader.blob(),
            createdAt: try reader.integer(),
            ticket: CommitTicket(batch: 0)
        )
    }

    /// A characteristic value as stored: tagged bytes, or NULL for none.
    static func value(_ value: CharacteristicValue?) -> SQLValue {
        guard let value else { return .null }
        // A tag and eight bytes: every value but text and data, which grow it.
        var writer = ByteWriter(capacity: 9)
        writer.writeValue(value)
        return .blob(writer.bytes)
    }

    private static func decodeValue(_ bytes: [UInt8]) throws(StoreError) -> CharacteristicValue {
        var reader = ByteReader(bytes)
        return try reader.readValue()
    }

    private static func integerList(_ values: [Int64]) -> [UInt8] {
        var writer = ByteWriter(capacity: 8 * values.count)
        for value in values { writer.writeUInt64(UInt64(bitPattern: value)) }
        return writer.bytes
    }

    private static func integers(_ bytes: [UInt8]) throws(StoreError) -> [Int64] {
        var reader = ByteReader(bytes)
        var values: [Int64] = []
        while !reader.isAtEnd { values.append(Int64(bitPattern: try reader.readUInt64())) }
        return values
    }
}

extension SQLValue {
    static func id<Kind>(_ id: ID<Kind>) -> SQLValue { .blob(id.raw.bytes) }
    static func optionalID<Kind>(_ id: ID<Kind>?) -> SQLValue { id.map { .id($0) } ?? .null }
    static func idList<Kind>(_ ids: [ID<Kind>]) -> SQLValue { .blob(ids.map(\.raw).storedBytes) }
    static func bool(_ flag: Bool) -> SQLValue { .integer(flag ? 1 : 0) }
    static func optionalText(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }
    static func optionalReal(_ real: Double?) -> SQLValue { real.map { .real($0) } ?? .null }
    static func optionalInteger(_ integer: Int64?) -> SQLValue { integer.map { .integer($0) } ?? .null }
}

/// Reads a row's columns in order, naming the table and column in any error.
struct RowReader {
    private let row: any StoredRow
    private let table: StoreTable
    /// The row's width, asked once: each column's bounds check asked the existential again.
    private let count: Int
    private var column = 0

    init(_ row: any StoredRow, _ table: StoreTable) {
        self.row = row
        self.table = table
        count = row.count
    }

    /// The next column's index.
    private mutating func next() throws(StoreError) -> Int {
        guard column < count else { throw .corrupt("\(table.name) row has \(count) columns") }
        defer { column += 1 }
        return column
    }

    private func mismatch(_ column: Int, _ expected: String) -> StoreError {
        .corrupt("\(table.name).\(table.columns[column]) holds \(row[column]), not \(expected)")
    }

    mutating func id<Kind>() throws(StoreError) -> ID<Kind> {
        guard let id = try optionalID() as ID<Kind>? else { throw mismatch(column - 1, "an id") }
        return id
    }

    /// Each optional reader asks for its own storage class first, and only when that fails whether
    /// the column is NULL: most columns hold a value, so most reads are one call.
    mutating func optionalID<Kind>() throws(StoreError) -> ID<Kind>? {
        let column = try next()
        if let raw = row.identifier(column) { return ID(raw) }
        if row.isNull(column) { return nil }
        throw mismatch(column, "an id")
    }

    mutating func idList<Kind>() throws(StoreError) -> [ID<Kind>] {
        try [UniqueIdentifier](storedBytes: try blob()).map(ID.init)
    }

    mutating func text() throws(StoreError) -> String {
        guard let text = try optionalText() else { throw mismatch(column - 1, "text") }
        return text
    }

    mutating func optionalText() throws(StoreError) -> String? {
        let column = try next()
        if let text = row.text(column) { return text }
        if row.isNull(column) { return nil }
        throw mismatch(column, "text")
    }

    mutating func integer() throws(StoreError) -> Int64 {
        guard let integer = try optionalInteger() else { throw mismatch(column - 1, "an integer") }
        return integer
    }

    mutating func optionalInteger() throws(StoreError) -> Int64? {
        let column = try next()
        if let integer = row.integer(column) { return integer }
        if row.isNull(column) { return nil }
        throw mismatch(column, "an integer")
    }

    mutating func bool() throws(StoreError) -> Bool { try integer() != 0 }

    mutating func optionalReal() throws(StoreError) -> Double? {
        let column = try next()
        if row.isNull(column) { return nil }
        switch row[column] {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        default: throw mismatch(column, "a number")
        }
    }

    mutating func blob() throws(StoreError) -> [UInt8] {
        guard let blob = try optionalBlob() else { throw mismatch(column - 1, "bytes") }
        return blob
    }

    mutating func optionalBlob() throws(StoreError) -> [UInt8]? {
        let column = try next()
        if let blob = row.blob(column) { return blob }
        if row.isNull(column) { return nil }
        throw mismatch(column, "bytes")
    }
}
