import Storage

/// Puts the records read from a collection folder into its table, and decides which file holds
/// a key when files written by older versions disagree with today's names: such a file never
/// makes the whole store unreadable, it is left out and reported (docs/ARCHIVE_FORMAT.md,
/// "Damaged records").
struct ArchiveRecordLoader {
    private(set) var table: ArchiveTable
    private var leftOut: [DamagedRecord] = []
    private let folderPath: String
    private let keyIndex: Int
    /// Keys whose record was read from a file under its legacy name, and that file's name.
    private var legacyHolders: [StorageKey: String] = [:]

    /// The files left out, with the reason, in the order of their names.
    var damage: [DamagedRecord] { leftOut.sorted { $0.path < $1.path } }

    init(table: ArchiveTable, folderPath: String) {
        self.table = table
        self.folderPath = folderPath
        keyIndex = table.schema.columnIndex(named: table.schema.primaryKey)!
    }

    /// Adds the record read from file `name`.
    /// - Throws: `StorageError` with code `.invalidKey` when the record's key is too long for a
    ///   file name.
    mutating func add(_ record: [StorageValue], file name: String) throws {
        let value = record[keyIndex]
        let key = StorageKey(value)
        let canonical = try FileNames.record(for: value, in: table.schema.name)
        if canonical == name {
            // Today's name always wins over a legacy one (two files cannot both have today's
            // name for one key); the check is skipped when no legacy file was seen.
            if !legacyHolders.isEmpty, let legacy = legacyHolders.removeValue(forKey: key) {
                leaveOut(legacy, table.records[key]![keyIndex], reason: "the file \(name) holds the same key")
            }
            table.records[key] = record
        } else if FileNames.isLegacyRecord(name, of: value) {
            // Replaced by a file of today's name at the next write or delete of the key.
            table.strayFiles[key, default: []].append(name)
            if let existing = table.records[key] {
                // Of two legacy files, the smaller name wins, whatever order the folder lists.
                guard let holder = legacyHolders[key], name < holder else {
                    let other = legacyHolders[key] ?? canonical
                    return leaveOut(name, value, reason: "the file \(other) holds the same key")
                }
                leaveOut(holder, existing[keyIndex], reason: "the file \(name) holds the same key")
            }
            legacyHolders[key] = name
            table.records[key] = record
        } else {
            leaveOut(name, value, reason: "the record's key \(value) does not match its file name")
        }
    }

    private mutating func leaveOut(_ name: String, _ key: StorageValue, reason: String) {
        leftOut.append(
            DamagedRecord(collection: table.schema.name, path: folderPath + "/" + name, key: key, reason: reason)
        )
    }
}
