/// What one committed transaction did to one collection: the primary keys it inserted or
/// replaced, and the primary keys it deleted.
///
/// A key appears once, in the list of its last operation in the transaction: a record saved and
/// then deleted in one transaction is listed as deleted only.
public struct CollectionChange: Sendable, Hashable {
    /// The collection, spelled as the writing call named it (names compare ignoring ASCII case).
    public var collection: String
    /// The primary keys of the records inserted or replaced, in the order first written.
    public var upserted: [StorageValue]
    /// The primary keys of the records deleted, in the order first written.
    public var deleted: [StorageValue]

    /// Creates a change.
    /// - Parameters:
    ///   - collection: the collection changed.
    ///   - upserted: the primary keys saved.
    ///   - deleted: the primary keys deleted.
    public init(collection: String, upserted: [StorageValue], deleted: [StorageValue]) {
        self.collection = collection
        self.upserted = upserted
        self.deleted = deleted
    }
}

/// The writes of one transaction to one collection, in order, as the session made them. Cheap to
/// record (whole key arrays are kept, not copied); reduced to a ``CollectionChange`` only when
/// someone observes the collection.
struct ChangeLog {
    enum Operation {
        case upsert([StorageValue])
        case delete([StorageValue])
        /// The keys of a bulk write (an import), runs of consecutive integers held as one.
        case upsertList(KeyList)
    }

    let collection: String
    private(set) var operations: [Operation] = []

    init(collection: String) {
        self.collection = collection
    }

    mutating func record(_ operation: Operation) {
        operations.append(operation)
    }

    /// The net effect: each key once, in the list of its last operation.
    func change() -> CollectionChange {
        // The common case, one batch of upserts with distinct keys, needs no bookkeeping.
        if operations.count == 1, case .upsert(let keys) = operations[0],
            Set(keys.lazy.map(StorageKey.init)).count == keys.count
        {
            return CollectionChange(collection: collection, upserted: keys, deleted: [])
        }
        if operations.count == 1, case .upsertList(let list) = operations[0], list.isStrictlyIncreasingRuns {
            return CollectionChange(collection: collection, upserted: list.values, deleted: [])
        }
        var order: [StorageValue] = []
        // Keys compare as SQLite compares them (text byte-wise, numbers as numbers).
        var lastIsDelete: [StorageKey: Bool] = [:]
        for operation in operations {
            let (keys, isDelete): ([StorageValue], Bool)
            switch operation {
            case .upsert(let upserted): (keys, isDelete) = (upserted, false)
            case .delete(let deleted): (keys, isDelete) = (deleted, true)
            case .upsertList(let list): (keys, isDelete) = (list.values, false)
            }
            for key in keys {
                if lastIsDelete.updateValue(isDelete, forKey: StorageKey(key)) == nil { order.append(key) }
            }
        }
        return CollectionChange(
            collection: collection,
            upserted: order.filter { lastIsDelete[StorageKey($0)] == false },
            deleted: order.filter { lastIsDelete[StorageKey($0)] == true }
        )
    }
}

/// The keys a bulk write stored, in order, kept small: a run of consecutive integer keys (an
/// import of sequential ids, or keys the store assigns) is one element, not one value a record,
/// so an import of millions of records holds its change record in a few bytes. The keys are
/// made into values only when someone observes the collection (`ChangeLog.change()`).
struct KeyList {
    private enum Segment {
        /// `count` keys from `start`, each one more than the one before.
        case run(start: Int64, count: Int64)
        case value(StorageValue)
    }

    private var segments: [Segment] = []
    /// How many keys were appended.
    private(set) var count = 0

    /// Appends `key`, extending the last run when it is the next integer.
    mutating func append(_ key: StorageValue) {
        count += 1
        if case .integer(let number) = key, let last = segments.last {
            switch last {
            case .run(let start, let length):
                let (next, overflow) = start.addingReportingOverflow(length)
                if !overflow, next == number {
                    segments[segments.count - 1] = .run(start: start, count: length + 1)
                    return
                }
            case .value(.integer(let previous)):
                let (next, overflow) = previous.addingReportingOverflow(1)
                if !overflow, next == number {
                    segments[segments.count - 1] = .run(start: previous, count: 2)
                    return
                }
            default:
                break
            }
        }
        segments.append(.value(key))
    }

    /// Whether the keys are one run or runs each above the one before with no other value: then
    /// no key repeats, so `ChangeLog.change()` needs no bookkeeping.
    var isStrictlyIncreasingRuns: Bool {
        var end: Int64?
        for segment in segments {
            guard case .run(let start, let length) = segment else { return false }
            if let end, start <= end { return false }
            end = start + (length - 1)
        }
        return true
    }

    /// The keys, in order.
    var values: [StorageValue] {
        var result: [StorageValue] = []
        result.reserveCapacity(count)
        for segment in segments {
            switch segment {
            case .run(let start, let length):
                for offset in 0..<length { result.append(.integer(start + offset)) }
            case .value(let value):
                result.append(value)
            }
        }
        return result
    }
}

/// The subscribers of a store's change streams, by folded collection name.
final class ChangeHub: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [String: [Int: AsyncStream<CollectionChange>.Continuation]] = [:]
        /// Set when the store closes: no change will come any more.
        var isFinished = false
    }

    private let state = Locked(State())

    /// Registers `continuation` for changes to `collection` and ends the registration when the
    /// stream terminates (its consumer is cancelled, or the stream is released).
    func subscribe(_ collection: String, _ continuation: AsyncStream<CollectionChange>.Continuation) {
        let folded = Identifier.folded(collection)
        let id = state.withLock { state -> Int? in
            guard !state.isFinished else { return nil }
            state.nextID += 1
            state.subscribers[folded, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        guard let id else { return continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[folded]?[id] = nil
                if state.subscribers[folded]?.isEmpty == true { state.subscribers[folded] = nil }
            }
        }
    }

    /// How many change streams are registered, for all collections.
    var subscriberCount: Int {
        state.withLock { $0.subscribers.values.reduce(0) { $0 + $1.count } }
    }

    /// Ends every change stream, and the ones subscribed later at once: the store has closed.
    func finishAll() {
        let continuations = state.withLock { state in
            state.isFinished = true
            defer { state.subscribers = [:] }
            return state.subscribers.values.flatMap(\.values)
        }
        // Outside the lock, as in `publish`: finishing runs the termination handlers.
        for continuation in continuations { continuation.finish() }
    }

    /// Delivers the changes of a committed transaction to the subscribers of each collection.
    /// Called in commit order; never blocks on a consumer.
    func publish(_ logs: [String: ChangeLog]) {
        for (folded, log) in logs {
            let continuations = state.withLock { $0.subscribers[folded].map { Array($0.values) } ?? [] }
            if continuations.isEmpty { continue }
            let change = log.change()
            // Outside the lock: a yield to a finished stream runs its termination handler,
            // which takes the lock.
            for continuation in continuations { continuation.yield(change) }
        }
    }
}
