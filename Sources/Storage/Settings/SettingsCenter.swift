import Foundation

/// The settings side of one ``ObjectStore``: a cache of stored values shared by every ``Settings``
/// instance on the store, and the subscribers of `SettingHandle.changes`.
///
/// The cache only ever holds committed values. Every commit that touches the settings collection
/// (whichever ``Settings`` instance made it) drops the affected entries and tells their
/// subscribers the new value, in commit order.
final class SettingsCenter: Sendable {
    private struct State {
        /// Stored JSON by record id; `.some(nil)` caches "not set". Ids are compared by their
        /// bytes (``StorageKey``), as the records are: `String`'s `==` would serve the NFC
        /// spelling of a key the value of its NFD spelling.
        var cache: [StorageKey: String?] = [:]
        /// Advanced by every commit, so a read that raced with a commit does not cache what it
        /// read before the commit.
        var generation = 0
        /// The backend's commit count (``ExternalCommitCounter``) the cache was filled under; a
        /// different count means another process may have committed, and the cache is dropped.
        var commitCount: UInt64?
        var nextID = 0
        var subscribers: [StorageKey: [Int: @Sendable (String?) -> Void]] = [:]
    }

    private let state = Locked(State())

    /// The stored JSON of setting `id`, or nil when it is not set.
    func storedJSON(for id: String, in store: ObjectStore) throws -> String? {
        let key = StorageKey(.text(id))
        // One cheap check of the engine's counter (no writer, no snapshot): another process's
        // commit is seen by the next read after it, not only this store's own commits.
        // Inside a write transaction nothing is cached, and the engine may not allow a second
        // transaction on this thread.
        let writing = store.isWritingOnCurrentThread
        // A backend that reports other processes' commits (`ExternalCommitSource`) keeps the cache
        // right through those reports: they start before the first value read here can be cached,
        // so no value is cached that a commit elsewhere could leave stale unreported.
        if !writing { store.observeCommitsElsewhere() }
        if !writing, let count = try store.externalCommitCount() {
            state.withLock { state in
                guard state.commitCount != count else { return }
                state.commitCount = count
                state.cache.removeAll()
                state.generation += 1
            }
        }
        let (cached, generation) = state.withLock { ($0.cache[key], $0.generation) }
        if let cached { return cached }
        let json = try store.fetch(SettingRecord.self, id: id)?.value
        // Inside a write transaction the read may see uncommitted writes: never cache those.
        if !writing && store.cachesSettings {
            state.withLock { state in
                if state.generation == generation { state.cache[key] = .some(json) }
            }
        }
        return json
    }

    /// Calls `body` with the stored JSON of setting `id` after every commit that changes it,
    /// until the returned cancellation is run.
    func subscribe(_ id: String, _ body: @escaping @Sendable (String?) -> Void) -> @Sendable () -> Void {
        let id = StorageKey(.text(id))
        let token = state.withLock { state in
            state.nextID += 1
            state.subscribers[id, default: [:]][state.nextID] = body
            return state.nextID
        }
        return { [weak self] in
            self?.state.withLock { state in
                state.subscribers[id]?[token] = nil
                if state.subscribers[id]?.isEmpty == true { state.subscribers[id] = nil }
            }
        }
    }

    /// Called after a commit that touched the settings collection, in commit order.
    func didCommit(_ log: ChangeLog, in store: ObjectStore) {
        let change = log.change()
        let deleted = Set(change.deleted.filter(\.isText).map(StorageKey.init))
        let ids = change.upserted.filter(\.isText).map(StorageKey.init) + deleted
        let notify = state.withLock { state in
            state.generation += 1
            for id in ids { state.cache[id] = nil }
            return ids.compactMap { id in state.subscribers[id].map { (id, Array($0.values)) } }
        }
        for (id, subscribers) in notify {
            let json: String?
            if deleted.contains(id) {
                json = nil
            } else {
                // A value that cannot be read back now is not announced as something it is not.
                guard let record = try? store.fetch(SettingRecord.self, id: id.value) else { continue }
                json = record.value
            }
            for subscriber in subscribers { subscriber(json) }
        }
    }
}

extension StorageValue {
    fileprivate var isText: Bool {
        if case .text = self { return true }
        return false
    }
}
