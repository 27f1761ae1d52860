import Foundation
import Storage

/// The keys one write transaction upserted and deleted, per collection, in the order of its
/// operations (a later operation on a key wins). Integer keys upserted in strictly ascending
/// order (a bulk load in key order) are recorded without hashing any, until one breaks the order
/// or a delete comes (`Keys.ascending`).
///
/// A collection's keys are one array in first-touched order and one dictionary of whether each
/// was last deleted, in an array of collections: recording a key costs one hash of the key (a
/// profile of bulk inserts showed the nested dictionaries by folded name, hashed for every key,
/// as a fifth of the writer's cost), and a collection with no delete gives its upserted keys
/// without looking each one up again. A collection of one upserted key (a single save) has no
/// dictionary at all, and the collections are found by a look at the last one, then by
/// comparing folded names while there are few, so a single save's change set hashes nothing and
/// allocates no dictionary (docs/BENCHMARKS.md).
struct PostgreSQLChangeSet {
    private struct Keys {
        let name: String
        let folded: String
        var order: [StorageValue] = []
        /// Whether each key of `order` was last deleted; empty while `order` holds one upserted
        /// key, or only upserted integer keys in strictly ascending order (`ascending`), and
        /// nothing was deleted (`isIndexed` is false).
        var isDeleted: [StorageValue: Bool] = [:]
        /// Whether a delete was recorded in the collection.
        var hasDeletes = false

        /// The last key of `order` while it holds only upserted integer keys in strictly
        /// ascending order, unindexed: a bulk load in key order, whose keys cannot repeat, so
        /// they are recorded without hashing one (a profile of bulk inserts showed the hashing
        /// and the growth of `isDeleted` as a tenth of the insert's cost).
        var ascending: Int64?

        /// Whether `isDeleted` covers `order`.
        var isIndexed: Bool { isDeleted.count == order.count }

        mutating func index() {
            ascending = nil
            guard !isIndexed else { return }
            for key in order { isDeleted[key] = false }  // unindexed: upserts only
        }

        mutating func upsert(_ key: StorageValue) {
            if !isIndexed || order.isEmpty {
                if order.isEmpty {
                    order.append(key)
                    if case .integer(let number) = key { ascending = number }
                    return
                }
                if let last = ascending, case .integer(let number) = key, number > last {
                    order.append(key)
                    ascending = number
                    return
                }
                if order.count == 1, order[0] == key { return }
                index()
            }
            if isDeleted.updateValue(false, forKey: key) == nil { order.append(key) }
        }

        mutating func record(_ keys: [StorageValue], deleted: Bool) {
            guard !keys.isEmpty else { return }
            index()
            if deleted { hasDeletes = true }
            for key in keys where isDeleted.updateValue(deleted, forKey: key) == nil {
                order.append(key)
            }
        }
    }

    private var collections: [Keys] = []
    /// The index of each collection by folded name, made once there are more than
    /// `linearSearchLimit` collections.
    private var indexes: [String: Int] = [:]
    private static let linearSearchLimit = 8
    /// The collection of the last `record`, as named, and its index: a writer records its keys
    /// one at a time, all in one collection.
    private var last: (name: String, index: Int)?

    var isEmpty: Bool { collections.isEmpty }

    /// Whether the transaction upserted one key and did nothing else.
    var isSingleUpsert: Bool {
        collections.count == 1 && collections[0].order.count == 1 && !collections[0].hasDeletes
    }

    private mutating func index(of collection: String, folded knownFolded: String? = nil) -> Int {
        if let last, last.name == collection { return last.index }
        let folded = knownFolded ?? Identifier.folded(collection)
        let found: Int?
        if collections.count > Self.linearSearchLimit {
            found = indexes[folded]
        } else {
            found = collections.firstIndex { $0.folded == folded }
        }
        let index: Int
        if let found {
            index = found
        } else {
            index = collections.count
            collections.append(Keys(name: collection, folded: folded))
            if collections.count > Self.linearSearchLimit {
                if indexes.isEmpty {
                    for (position, keys) in collections.enumerated() { indexes[keys.folded] = position }
                } else {
                    indexes[folded] = index
                }
            }
        }
        last = (collection, index)
        return index
    }

    /// Records one upserted key of `collection`, whose folded name is `folded`.
    mutating func record(_ collection: String, folded: String, _ key: StorageValue) {
        let index = index(of: collection, folded: folded)
        collections[index].upsert(key)
    }

    mutating func record(_ collection: String, _ keys: [StorageValue], deleted: Bool) {
        let index = index(of: collection)
        collections[index].record(keys, deleted: deleted)
    }

    /// The keys upserted or deleted in the collection whose folded name is `folded`.
    func keys(of folded: String) -> [StorageValue] {
        collections.first { $0.folded == folded }?.order ?? []
    }

    /// Per collection (by folded name): its name, and the JSON of its upserted and deleted keys.
    var rows: (collections: [StorageValue], upserted: [StorageValue], deleted: [StorageValue]) {
        var result: ([StorageValue], [StorageValue], [StorageValue]) = ([], [], [])
        for keys in collections.sorted(by: { $0.folded < $1.folded }) {
            result.0.append(.text(keys.name))
            guard keys.hasDeletes else {
                result.1.append(.text(PostgreSQLChangeFeed.encode(keys.order)))
                result.2.append(.text(PostgreSQLChangeFeed.encode([])))
                continue
            }
            result.1.append(.text(PostgreSQLChangeFeed.encode(keys.order.filter { keys.isDeleted[$0] == false })))
            result.2.append(.text(PostgreSQLChangeFeed.encode(keys.order.filter { keys.isDeleted[$0] == true })))
        }
        return result
    }
}
