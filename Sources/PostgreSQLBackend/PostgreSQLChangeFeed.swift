import Foundation
import Storage

/// Change observation across processes and machines.
///
/// Every write transaction that changed records adds, just before it commits, one row per
/// collection to the store's `storage$changes` table (the keys as JSON text, so a transaction of
/// any size fits: NOTIFY's 8,000-byte payload never carries keys) and sends an empty
/// `NOTIFY` on the store's channel. It takes a transaction-scoped advisory lock first, so change
/// rows get their ids in commit order. A listener connection per backend waits for the
/// notifications and reads the rows after the last id it delivered, skipping its own backend's.
enum PostgreSQLChangeFeed {
    /// The notification channel of a store's schema.
    static func channel(for schema: String) -> String {
        "storage_" + PostgreSQLIdentifier.hash(schema)
    }

    /// The advisory lock key that orders the change rows of a store.
    static func lockKey(for schema: String) -> Int64 {
        Int64(bitPattern: UInt64(PostgreSQLIdentifier.hash("changes:" + schema), radix: 16) ?? 0)
    }

    /// The statement that records a transaction's changes and notifies the listeners: takes the
    /// lock, inserts the rows, notifies, in one round trip.
    static func publishSQL(_ catalog: PostgreSQLCatalog) -> String {
        "INSERT INTO " + catalog.changesTable + " (origin, collection, upserted, deleted)"
            + " SELECT $1::text, c, u, d FROM (SELECT pg_advisory_xact_lock($2::int8), pg_notify($3::text, '')) AS l,"
            + " unnest($4::text[], $5::text[], $6::text[]) AS t(c, u, d)"
    }

    /// Keys as JSON text: each a tagged string (`i:`, `r:`, `t:`, `b:`), so every key type
    /// comes back exactly.
    static func encode(_ keys: [StorageValue]) -> String {
        let tagged: [String] = keys.map { key in
            switch key {
            case .null: "n:"
            case .integer(let value): "i:" + String(value)
            case .real(let value): "r:" + String(value.bitPattern)
            case .text(let value): "t:" + value
            case .blob(let value): "b:" + value.base64EncodedString()
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: tagged)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String) -> [StorageValue] {
        guard let tagged = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] else { return [] }
        return tagged.compactMap { item in
            let body = String(item.dropFirst(2))
            switch item.prefix(2) {
            case "i:": return Int64(body).map(StorageValue.integer)
            case "r:": return UInt64(body).map { .real(Double(bitPattern: $0)) }
            case "t:": return .text(body)
            case "b:": return Data(base64Encoded: body).map(StorageValue.blob)
            default: return .null
            }
        }
    }
}

/// The keys one write transaction upserted and deleted, per collection, in the order of its
/// operations (a later operation on a key wins).
struct PostgreSQLChangeSet {
    private var names: [String: String] = [:]
    private var order: [String: [StorageValue]] = [:]
    private var lastIsDelete: [String: [StorageValue: Bool]] = [:]

    var isEmpty: Bool { names.isEmpty }

    mutating func record(_ collection: String, _ keys: [StorageValue], deleted: Bool) {
        let folded = Identifier.folded(collection)
        if names[folded] == nil { names[folded] = collection }
        for key in keys where lastIsDelete[folded, default: [:]].updateValue(deleted, forKey: key) == nil {
            order[folded, default: []].append(key)
        }
    }

    /// Per collection: its name, and the JSON of its upserted and deleted keys.
    var rows: (collections: [StorageValue], upserted: [StorageValue], deleted: [StorageValue]) {
        var result: ([StorageValue], [StorageValue], [StorageValue]) = ([], [], [])
        for (folded, name) in names.sorted(by: { $0.key < $1.key }) {
            let keys = order[folded] ?? []
            let last = lastIsDelete[folded] ?? [:]
            result.0.append(.text(name))
            result.1.append(.text(PostgreSQLChangeFeed.encode(keys.filter { last[$0] == false })))
            result.2.append(.text(PostgreSQLChangeFeed.encode(keys.filter { last[$0] == true })))
        }
        return result
    }
}
