import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's folder on disk: loading it, committing changes to it with the journal, and
/// recovering from a commit a crash interrupted (docs/ARCHIVE_FORMAT.md, "Durability").
struct StoreFiles: Sendable {
    /// The store folder, absolute.
    let directory: String

    var lockPath: String { directory + "/" + FileNames.lockFile }
    var journalPath: String { directory + "/" + FileNames.journalFile }

    func path(_ relative: String) -> String { directory + "/" + relative }

    // MARK: Loading

    /// Reads every collection folder. Folders without a schema file belong to a commit that
    /// never happened and are skipped.
    func load() throws -> ArchiveDatabase {
        var database = ArchiveDatabase()
        for folder in try FileSystem.list(directory).sorted() where folder.hasPrefix(FileNames.collectionPrefix) {
            let folderPath = path(folder)
            // A symbolic link (or anything but a folder) under a collection folder's name was
            // not made by the store: following it would read and write files outside the store.
            var status = stat()
            guard lstat(folderPath, &status) == 0 else { throw FileSystem.error(.io, "inspect", folderPath) }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw StorageError(
                    .corrupt,
                    "\(folderPath) should be a collection folder but is a symbolic link or a file",
                    path: folderPath
                )
            }
            let schemaPath = folderPath + "/" + FileNames.schemaFile
            guard let schemaBytes = try FileSystem.readFile(schemaPath) else { continue }
            let stored = try ArchiveDecoder().decode(
                SchemaArchive.self,
                from: schemaBytes,
                path: schemaPath,
                kind: .schema
            )
            let schema = try stored.schema(path: schemaPath)
            guard try FileNames.folder(for: schema.name) == folder else {
                throw StorageError(
                    .corrupt,
                    "the schema in \(schemaPath) names collection '\(schema.name)', which belongs in another folder",
                    path: schemaPath
                )
            }
            var table = ArchiveTable(schema: schema, folder: folder)
            table.lastAssignedKey = stored.lastAssignedKey
            var positions: [String: Int] = [:]
            for (index, column) in schema.columns.enumerated() { positions[column.name] = index }
            let realColumns = schema.columns.indices.filter { schema.columns[$0].type == .real }
            var loader = ArchiveRecordLoader(table: table, folderPath: folderPath)
            for name in try FileSystem.list(folderPath) where FileNames.isRecord(name) {
                let recordPath = folderPath + "/" + name
                guard let bytes = try FileSystem.readFile(recordPath) else { continue }
                var record = try RecordArchive.decode(
                    bytes,
                    path: recordPath,
                    positions: positions,
                    columnCount: schema.columns.count
                )
                // A column widened to real after this record was written.
                for index in realColumns {
                    if case .integer(let number) = record[index] { record[index] = .real(Double(number)) }
                }
                try loader.add(record, file: name)
            }
            table = loader.table
            database.damage += loader.damage
            for index in table.uniqueIndexPositions {
                do {
                    try table.buildUniqueIndex(index)
                } catch let error as StorageError {
                    throw StorageError(
                        .corrupt,
                        "stored records break a unique index: \(error.message)",
                        path: folderPath
                    )
                }
            }
            table.buildLookups()
            database.tables[Identifier.folded(schema.name)] = table
        }
        return database
    }

    // MARK: The generation counter

    /// The number of commits made to the store, kept in the first 8 bytes of the lock file, so
    /// that a process sees when another one has changed the store. Not synced: after a crash
    /// every process reloads anyway.
    func generation(_ lock: Int32) -> Int64 {
        var value: Int64 = 0
        let count = withUnsafeMutableBytes(of: &value) { pread(lock, $0.baseAddress, 8, 0) }
        return count == 8 ? Int64(littleEndian: value) : 0
    }

    /// - Throws: `StorageError` with code `.io` when the counter cannot be written: other
    ///   processes would not see the commit it announces.
    func setGeneration(_ value: Int64, _ lock: Int32) throws {
        var bytes = value.littleEndian
        let written = withUnsafeBytes(of: &bytes) { pwrite(lock, $0.baseAddress, 8, 0) }
        guard written == 8 else {
            throw FileSystem.error(.io, "write the commit counter of", lockPath, errno: written < 0 ? errno : EIO)
        }
    }

    // MARK: Committing

    /// The files one commit writes and removes, relative to the store folder.
    struct Plan {
        var writes: [(path: String, bytes: [UInt8])] = []
        var removals: [String] = []
        /// Collection folders the commit creates.
        var newFolders: [String] = []
        var isEmpty: Bool { writes.isEmpty && removals.isEmpty }
    }

    /// From this many files on, a commit flushes its temporary files with one `syncfs`.
    static let syncFileSystemThreshold = 16

    /// Makes `plan` durable: temporary files, fsynced; the journal, fsynced with its folder; the
    /// renames and removals; an fsync of every folder touched; the journal removed. A plan of a
    /// single write needs no journal: its rename is atomic.
    func commit(_ plan: Plan) throws {
        for folder in plan.newFolders { try FileSystem.makeDirectory(path(folder)) }
        if !plan.newFolders.isEmpty { try FileSystem.syncDirectory(directory) }
        var renames: [JournalArchive.Rename] = []
        let needsJournal = plan.writes.count + plan.removals.count > 1
        do {
            // A large batch is flushed with one syncfs after every file is written; a small one
            // fsyncs each file (cheaper than flushing the whole file system).
            let batched = plan.writes.count >= Self.syncFileSystemThreshold
            for write in plan.writes {
                let folder = write.path.prefix { $0 != "/" }
                let temporary = folder + "/" + FileSystem.temporaryName()
                try FileSystem.writeNewFile(write.bytes, at: path(temporary), sync: !batched)
                renames.append(.init(from: temporary, to: write.path))
            }
            if batched, try !FileSystem.syncFileSystem(containing: directory) {
                for rename in renames { try FileSystem.syncFile(path(rename.from)) }
            }
            if needsJournal {
                let journal = try ArchiveEncoder().encodeBytes(
                    JournalArchive(renames: renames, removals: plan.removals),
                    kind: .journal
                )
                try FileSystem.writeNewFile(journal, at: journalPath, sync: true)
                try FileSystem.syncDirectory(directory)
            }
        } catch {
            for rename in renames { try? FileSystem.remove(path(rename.from)) }
            if needsJournal { try? FileSystem.remove(journalPath) }
            throw error
        }
        do {
            try apply(JournalArchive(renames: renames, removals: plan.removals))
            if needsJournal { try FileSystem.remove(journalPath) }
        } catch let error as StorageError {
            var interrupted = error
            interrupted.message += " (the commit is recorded in the journal and completes when the store is next used)"
            interrupted.underlying = error
            throw interrupted
        }
    }

    /// Performs a journal's renames and removals, skipping those already done, then fsyncs
    /// every folder touched.
    private func apply(_ journal: JournalArchive) throws {
        var folders = Set<String>()
        for rename in journal.renames {
            folders.insert(String(rename.to.prefix { $0 != "/" }))
            if FileSystem.exists(path(rename.from)) { try FileSystem.move(path(rename.from), to: path(rename.to)) }
        }
        for removal in journal.removals {
            folders.insert(String(removal.prefix { $0 != "/" }))
            try FileSystem.remove(path(removal))
        }
        for folder in folders.sorted() { try FileSystem.syncDirectory(path(folder)) }
    }

    // MARK: Recovery

    /// Completes or undoes a commit that a crash interrupted: a journal that reads back intact
    /// is rolled forward; a torn one is removed with the temporary files (the commit never
    /// happened). Call with the lock file locked exclusively.
    /// - Returns: whether a journal was rolled forward (the store changed).
    @discardableResult
    func recover() throws -> Bool {
        guard let bytes = try FileSystem.readFile(journalPath) else { return false }
        let journal: JournalArchive
        do {
            journal = try ArchiveDecoder().decode(JournalArchive.self, from: bytes, path: journalPath, kind: .journal)
            guard journal.renames.allSatisfy({ isValid($0.from) && isValid($0.to) }),
                journal.removals.allSatisfy(isValid)
            else { throw StorageError(.corrupt, "the journal names a path outside the store", path: journalPath) }
        } catch {
            try FileSystem.remove(journalPath)
            try FileSystem.syncDirectory(directory)
            try removeTemporaryFiles()
            return false
        }
        try apply(journal)
        try FileSystem.remove(journalPath)
        try FileSystem.syncDirectory(directory)
        return true
    }

    /// Whether a journal path is `c-…/name`, inside a collection folder.
    private func isValid(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasPrefix(FileNames.collectionPrefix), !parts[1].isEmpty else { return false }
        return parts.allSatisfy { $0 != "." && $0 != ".." && !$0.contains("\0") }
    }

    /// Removes the temporary files of commits that never happened. Call with the lock file
    /// locked exclusively and no journal present.
    func removeTemporaryFiles() throws {
        for folder in try FileSystem.list(directory) {
            if folder.hasPrefix(FileNames.temporaryPrefix) {
                try FileSystem.remove(path(folder))
            } else if folder.hasPrefix(FileNames.collectionPrefix) {
                for name in try FileSystem.list(path(folder)) where name.hasPrefix(FileNames.temporaryPrefix) {
                    try FileSystem.remove(path(folder) + "/" + name)
                }
            }
        }
    }
}
