/// What `ObjectStore.copy(to:collections:mode:verifying:batchSize:progress:)` does with a
/// destination collection that already holds records.
public enum StoreCopyMode: String, Sendable, Hashable, CaseIterable {
    /// Refuse: the copy throws `StorageError` with code `.collectionNotEmpty` before writing
    /// anything to that collection.
    case refuse
    /// Upsert: every source record is written over the destination's record with the same key;
    /// the destination's other records stay. Running an interrupted copy again with `merge`
    /// completes it.
    case merge
    /// Replace: the destination collection is dropped (records, indexes, schema) and copied anew.
    case replace
}
