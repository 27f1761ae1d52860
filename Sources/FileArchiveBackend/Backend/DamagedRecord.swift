public import Storage

/// A record file that a file archive could not load, found when the store was opened or last
/// reloaded: the rest of the store is served, and this record is left out until its key is
/// written or deleted again (docs/ARCHIVE_FORMAT.md, "Damaged records").
///
/// Archives written by versions that compared keys by Swift's `String` and `Double` equality
/// can hold such files: a record whose key does not match its file name (two keys saved in one
/// batch that differ only in Unicode normalization), or two files for what is now one key (`0.0`
/// and `-0.0`).
///
/// ```swift
/// let backend = try FileArchiveStorageBackend(directory: "Store")
/// for damaged in backend.damagedRecords { print(damaged) }   // path, collection, key, reason
/// ```
public struct DamagedRecord: Sendable, Equatable, CustomStringConvertible {
    /// The collection the file belongs to.
    public let collection: String
    /// The file, absolute; it is left as it was, so its record can still be read by hand.
    public let path: String
    /// The primary key the file's record holds.
    public let key: StorageValue
    /// Why the file was left out.
    public let reason: String

    /// The file, its collection and key, and the reason it was left out, in one line.
    public var description: String { "\(path) (collection '\(collection)', key \(key)): \(reason)" }
}
