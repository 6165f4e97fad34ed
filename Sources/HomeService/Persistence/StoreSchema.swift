/// A stored table: its columns in row order, the leading ones forming the key.
struct StoreTable: Hashable, Sendable {
    let name: String
    let columns: [String]
    let keyColumnCount: Int
    /// How load orders rows: creation order (`sequence`), so lists come back as they were. The large
    /// tables are read in key order instead (`id`, no sort in SQLite) and the loader restores the
    /// order in memory: ORDER BY an unindexed column sorted the whole table in a temporary B-tree.
    let orderBy: String

    var keyColumns: ArraySlice<String> { columns.prefix(keyColumnCount) }
}

/// The schema and its migrations. Version N is reached by running migrations 1...N in order; the
/// database's `PRAGMA user_version` records how far it got. Never edit a released migration: add one.
enum StoreSchema {
    static let account = StoreTable(
        name: "account",
        columns: ["id", "name", "is_owner", "primary_home", "created_at", "sequence"],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let token = StoreTable(
        name: "token",
        columns: [
            "id", "account", "hash", "created_at", "sequence", "name", "scope", "homes", "expires_at", "last_used_at",
        ],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let home = StoreTable(
        name: "home",
        columns: ["id", "name", "owner", "room_for_entire_home", "revision", "sequence", "time_zone"],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let member = StoreTable(
        name: "member",
        columns: ["home", "account", "role"],
        keyColumnCount: 2,
        orderBy: "home, account"
    )
    static let room = StoreTable(
        name: "room",
        columns: ["id", "home", "name", "sequence"],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let zone = StoreTable(
        name: "zone",
        columns: ["id", "home", "name", "rooms", "sequence"],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let accessory = StoreTable(
        name: "accessory",
        columns: [
            "id", "home", "name", "room", "category", "manufacturer", "model", "firmware_version",
            "supports_identify", "bridge", "is_blocked", "is_reachable", "sequence", "credential_hash",
        ],
        keyColumnCount: 1,
        orderBy: "id"  // the loader sorts it (StoreLoader.decodedInCreationOrder)
    )
    static let service = StoreTable(
        name: "service",
        columns: [
            "id", "accessory", "home", "type", "name", "is_primary", "is_user_interactive", "associated_type",
            "linked_services", "sequence",
        ],
        keyColumnCount: 1,
        orderBy: "id"  // the loader sorts it (StoreLoader.decodedInCreationOrder)
    )
    /// Type, properties and metadata, shared by every characteristic that has the same.
    static let characteristicKind = StoreTable(
        name: "characteristic_kind",
        columns: [
            "id", "type", "properties", "format", "units", "minimum", "maximum", "step", "max_length", "min_length",
            "valid_values", "description",
        ],
        keyColumnCount: 1,
        orderBy: "id"
    )
    static let characteristic = StoreTable(
        name: "characteristic",
        columns: ["id", "service", "accessory", "home", "kind", "value", "value_time", "sequence"],
        keyColumnCount: 1,
        orderBy: "id"  // the loader restores each service's order
    )
    static let serviceGroup = StoreTable(
        name: "service_group",
        columns: ["id", "home", "name", "services", "sequence"],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let actionSet = StoreTable(
        name: "action_set",
        columns: ["id", "home", "name", "kind", "actions", "last_execution", "sequence"],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    static let timerTrigger = StoreTable(
        name: "timer_trigger",
        columns: [
            "id", "home", "name", "is_enabled", "fire_date", "recurrence", "action_sets", "last_fire", "sequence",
            "recurrence_unit",
        ],
        keyColumnCount: 1,
        orderBy: "sequence"
    )
    /// A commit's events of one home, revisions `first_revision` through `last_revision`, in one row
    /// (``RowCoding/encodeEvents(_:)``): an SQLite insert per event was most of the writer's work
    /// under a write load. Numbered (the rowid, not loaded) in the order they were written, so each
    /// home's come in revision order (``EventBatchIndex``).
    static let eventBatch = StoreTable(
        name: "event_batch",
        columns: ["home", "first_revision", "last_revision", "events"],
        keyColumnCount: 2,
        orderBy: "number"
    )

    /// Versions 1 to 5 kept a row per event; migration 6 turns them into batches.
    static let legacyEvent = StoreTable(
        name: "event",
        columns: ["home", "revision", "time", "initiator", "body"],
        keyColumnCount: 2,
        orderBy: "home, revision"
    )

    /// An account's idempotency records of one commit (``IdempotencyRecords``), numbered in the
    /// order they were written (``RowCoding/idempotencyRow(_:_:_:)``).
    static let idempotencyBatch = StoreTable(
        name: "idempotency_batch",
        columns: ["number", "account", "records"],
        keyColumnCount: 1,
        orderBy: "number"
    )

    /// Versions 3 to 7 kept a row per idempotency key; migration 8 moves them into batches.
    static let legacyIdempotencyKey = StoreTable(
        name: "idempotency_key",
        columns: ["account", "key", "request_digest", "outcome", "created_at"],
        keyColumnCount: 2,
        orderBy: "created_at"
    )

    /// Every table, parents before children (the order load decodes them in).
    static let tables: [StoreTable] = [
        account, token, home, member, room, zone, accessory, service, characteristicKind, characteristic,
        serviceGroup, actionSet, timerTrigger, eventBatch, idempotencyBatch,
    ]

    /// Migration N (1-based) takes the schema from version N-1 to N.
    static let migrations: [String] = [
        """
        CREATE TABLE account (id BLOB PRIMARY KEY, name TEXT NOT NULL, is_owner INTEGER NOT NULL,
            primary_home BLOB, created_at INTEGER NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE token (id BLOB PRIMARY KEY, account BLOB NOT NULL, hash BLOB NOT NULL UNIQUE,
            created_at INTEGER NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE home (id BLOB PRIMARY KEY, name TEXT NOT NULL, owner BLOB NOT NULL,
            room_for_entire_home BLOB NOT NULL, revision INTEGER NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE member (home BLOB NOT NULL, account BLOB NOT NULL, role TEXT NOT NULL,
            PRIMARY KEY (home, account)) WITHOUT ROWID;
        CREATE TABLE room (id BLOB PRIMARY KEY, home BLOB NOT NULL, name TEXT NOT NULL,
            sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE zone (id BLOB PRIMARY KEY, home BLOB NOT NULL, name TEXT NOT NULL, rooms BLOB NOT NULL,
            sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE accessory (id BLOB PRIMARY KEY, home BLOB NOT NULL, name TEXT NOT NULL, room BLOB NOT NULL,
            category INTEGER NOT NULL, manufacturer TEXT NOT NULL, model TEXT NOT NULL,
            firmware_version TEXT NOT NULL, supports_identify INTEGER NOT NULL, bridge BLOB,
            is_blocked INTEGER NOT NULL, is_reachable INTEGER NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE service (id BLOB PRIMARY KEY, accessory BLOB NOT NULL, home BLOB NOT NULL, type TEXT NOT NULL,
            name TEXT NOT NULL, is_primary INTEGER NOT NULL, is_user_interactive INTEGER NOT NULL,
            associated_type TEXT, linked_services BLOB NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE characteristic (id BLOB PRIMARY KEY, service BLOB NOT NULL, accessory BLOB NOT NULL,
            home BLOB NOT NULL, type TEXT NOT NULL, properties INTEGER NOT NULL, format TEXT NOT NULL, units TEXT,
            minimum REAL, maximum REAL, step REAL, max_length INTEGER, min_length INTEGER, valid_values BLOB,
            description TEXT, value BLOB, value_time INTEGER NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE service_group (id BLOB PRIMARY KEY, home BLOB NOT NULL, name TEXT NOT NULL,
            services BLOB NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE action_set (id BLOB PRIMARY KEY, home BLOB NOT NULL, name TEXT NOT NULL, kind INTEGER NOT NULL,
            actions BLOB NOT NULL, last_execution INTEGER, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE timer_trigger (id BLOB PRIMARY KEY, home BLOB NOT NULL, name TEXT NOT NULL,
            is_enabled INTEGER NOT NULL, fire_date INTEGER NOT NULL, recurrence INTEGER, action_sets BLOB NOT NULL,
            last_fire INTEGER, sequence INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE event (home BLOB NOT NULL, revision INTEGER NOT NULL, time INTEGER NOT NULL,
            initiator BLOB NOT NULL, body BLOB NOT NULL, PRIMARY KEY (home, revision)) WITHOUT ROWID;
        """,
        // 2: homes have a time zone; recurrences are a count of a calendar unit (were seconds).
        """
        ALTER TABLE home ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
        ALTER TABLE timer_trigger ADD COLUMN recurrence_unit TEXT;
        UPDATE timer_trigger SET recurrence = recurrence / 60, recurrence_unit = 'minute'
            WHERE recurrence IS NOT NULL;
        """,
        // 3: remembered outcomes of mutations sent with an idempotency key.
        """
        CREATE TABLE idempotency_key (account BLOB NOT NULL, key TEXT NOT NULL, request_digest BLOB NOT NULL,
            outcome BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (account, key)) WITHOUT ROWID;
        """,
        // 4: accessories pair with a setup code and prove themselves with a credential afterwards.
        """
        ALTER TABLE accessory ADD COLUMN credential_hash BLOB;
        """,
        // 5: characteristics name a shared kind (type, properties, metadata) instead of repeating it:
        // half a million rows shrink by about a third and load without decoding a dozen columns each.
        """
        CREATE TABLE characteristic_kind (id INTEGER PRIMARY KEY, type TEXT NOT NULL, properties INTEGER NOT NULL,
            format TEXT NOT NULL, units TEXT, minimum REAL, maximum REAL, step REAL, max_length INTEGER,
            min_length INTEGER, valid_values BLOB, description TEXT);
        INSERT INTO characteristic_kind (type, properties, format, units, minimum, maximum, step, max_length,
            min_length, valid_values, description)
            SELECT DISTINCT type, properties, format, units, minimum, maximum, step, max_length, min_length,
                valid_values, description
            FROM characteristic;
        CREATE TABLE characteristic_v5 (id BLOB PRIMARY KEY, service BLOB NOT NULL, accessory BLOB NOT NULL,
            home BLOB NOT NULL, kind INTEGER NOT NULL, value BLOB, value_time INTEGER NOT NULL,
            sequence INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO characteristic_v5 (id, service, accessory, home, kind, value, value_time, sequence)
            SELECT c.id, c.service, c.accessory, c.home, k.id, c.value, c.value_time, c.sequence
            FROM characteristic c JOIN characteristic_kind k
                ON k.type = c.type AND k.properties = c.properties AND k.format = c.format
                AND k.units IS c.units AND k.minimum IS c.minimum AND k.maximum IS c.maximum
                AND k.step IS c.step AND k.max_length IS c.max_length AND k.min_length IS c.min_length
                AND k.valid_values IS c.valid_values AND k.description IS c.description;
        DROP TABLE characteristic;
        ALTER TABLE characteristic_v5 RENAME TO characteristic;
        """,
        // 6: a commit's events of a home share one row; SQLiteStorage moves the event rows into it
        // (``SQLiteStorage/batchLegacyEvents(in:)``) and drops the old table.
        """
        CREATE TABLE event_batch (home BLOB NOT NULL, first_revision INTEGER NOT NULL,
            last_revision INTEGER NOT NULL, events BLOB NOT NULL,
            PRIMARY KEY (home, first_revision)) WITHOUT ROWID;
        """,
        // 7: event batches are numbered in the order they are written (``EventBatchIndex``): keyed by
        // (home, revision), each commit's insert made SQLite rebalance the table's last pages every
        // few commits.
        """
        CREATE TABLE event_batch_v7 (number INTEGER PRIMARY KEY, home BLOB NOT NULL,
            first_revision INTEGER NOT NULL, last_revision INTEGER NOT NULL, events BLOB NOT NULL);
        INSERT INTO event_batch_v7 (home, first_revision, last_revision, events)
            SELECT home, first_revision, last_revision, events FROM event_batch ORDER BY home, first_revision;
        DROP TABLE event_batch;
        ALTER TABLE event_batch_v7 RENAME TO event_batch;
        """,
        // 8: an account's idempotency records of a commit share one row; SQLiteStorage moves the
        // rows of `idempotency_key` (one per key) into it (``SQLiteStorage/batchLegacyIdempotencyKeys(in:)``)
        // and drops the old table.
        """
        CREATE TABLE idempotency_batch (number INTEGER PRIMARY KEY, account BLOB NOT NULL, records BLOB NOT NULL);
        """,
        // 9: tokens have a name, a scope, the homes they may act in (NULL: every home), an expiry
        // (NULL: never) and their last use; the tokens issued before are unlimited.
        """
        ALTER TABLE token ADD COLUMN name TEXT NOT NULL DEFAULT '';
        ALTER TABLE token ADD COLUMN scope TEXT NOT NULL DEFAULT 'full';
        ALTER TABLE token ADD COLUMN homes BLOB;
        ALTER TABLE token ADD COLUMN expires_at INTEGER;
        ALTER TABLE token ADD COLUMN last_used_at INTEGER NOT NULL DEFAULT 0;
        """,
    ]

    static var currentVersion: Int { migrations.count }
    /// The version whose migration batches the old event rows (in Swift, after its SQL).
    static let eventBatchVersion = 6
    /// The version whose migration batches the old idempotency rows (in Swift, after its SQL).
    static let idempotencyBatchVersion = 8
}
