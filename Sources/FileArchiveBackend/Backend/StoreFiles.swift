import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's folder on disk: loading it, committing changes to it with the journal, and
/// recovering from a commit a crash interrupted (docs/ARCHIVE_FORMAT.md, "Durability").
///
/// Everything below the store folder is reached through `Folder` descriptors: the store folder,
/// opened once, and each collection folder, opened from it with `O_NOFOLLOW` whenever it is used,
/// so that a collection folder replaced by a symbolic link is refused, never followed.
struct StoreFiles: Sendable {
    /// The store folder, open for the backend's lifetime.
    let root: Folder

    /// The store folder's absolute path, for messages.
    var directory: String { root.path }
    var lockPath: String { root.path(FileNames.lockFile) }
    var journalPath: String { root.path(FileNames.journalFile) }

    /// A collection folder of the store.
    /// - Throws: `StorageError` with code `.corrupt` when it is missing, a symbolic link or not a
    ///   folder.
    func collectionFolder(_ name: String) throws -> Folder {
        guard let folder = try root.subfolder(name) else {
            throw StorageError(.corrupt, "the collection folder \(root.path(name)) is missing", path: root.path(name))
        }
        return folder
    }

    // MARK: Loading

    /// Reads every collection folder. Folders without a schema file belong to a commit that
    /// never happened and are skipped. A collection folder that is a symbolic link or a file, or
    /// holds another collection's schema, is refused on its own (`ArchiveDatabase.refusedFolders`):
    /// the store's other collections stay usable.
    func load() throws -> ArchiveDatabase {
        var database = ArchiveDatabase()
        for folder in try root.list().sorted() where folder.hasPrefix(FileNames.collectionPrefix) {
            let folderPath = root.path(folder)
            // A symbolic link (or anything but a folder) under a collection folder's name was
            // not made by the store: it is refused, never followed (`Folder.subfolder`).
            let opened: Folder
            do {
                guard let subfolder = try root.subfolder(folder) else { continue }
                opened = subfolder
            } catch let error as StorageError where error.code == .corrupt {
                database.refusedFolders[folder] = error
                continue
            }
            let schemaPath = folderPath + "/" + FileNames.schemaFile
            guard let schemaBytes = try opened.readFile(FileNames.schemaFile) else { continue }
            let stored = try ArchiveDecoder().decode(
                SchemaArchive.self,
                from: schemaBytes,
                path: schemaPath,
                kind: .schema
            )
            let schema = try stored.schema(path: schemaPath)
            guard try FileNames.folder(for: schema.name) == folder else {
                // A folder renamed by hand (`c-item.moved`): its collection's own folder, if any,
                // is the one the store uses.
                database.refusedFolders[folder] = StorageError(
                    .corrupt,
                    "the schema in \(schemaPath) names collection '\(schema.name)', which belongs in another folder",
                    path: schemaPath
                )
                continue
            }
            var table = ArchiveTable(schema: schema, folder: folder)
            table.lastAssignedKey = stored.lastAssignedKey
            var positions: [String: Int] = [:]
            for (index, column) in schema.columns.enumerated() { positions[column.name] = index }
            let widenedColumns = schema.columns.indices.filter {
                schema.columns[$0].type == .real || schema.columns[$0].type == .text
            }
            var loader = ArchiveRecordLoader(table: table, folderPath: folderPath)
            for name in try opened.list() where FileNames.isRecord(name) {
                let recordPath = folderPath + "/" + name
                guard let bytes = try opened.readFile(name) else { continue }
                var record = try RecordArchive.decode(
                    bytes,
                    path: recordPath,
                    positions: positions,
                    columnCount: schema.columns.count
                )
                // A column widened (to real or text) after this record was written.
                for index in widenedColumns {
                    if case .integer = record[index] {
                        record[index] = record[index].applyingAffinity(schema.columns[index].type)
                    }
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
    ///
    /// Every folder the plan touches is opened (and checked) before anything is written, so that
    /// a collection folder replaced by a symbolic link fails the commit with nothing written.
    func commit(_ plan: Plan) throws {
        for folder in plan.newFolders { try root.makeSubfolder(folder) }
        if !plan.newFolders.isEmpty { try root.sync() }
        var folders: [String: Folder] = [:]
        for relative in plan.writes.map(\.path) + plan.removals {
            let name = Self.folderName(of: relative)
            if folders[name] == nil { folders[name] = try collectionFolder(name) }
        }
        var renames: [JournalArchive.Rename] = []
        let needsJournal = plan.writes.count + plan.removals.count > 1
        do {
            // A large batch is flushed with one syncfs after every file is written; a small one
            // fsyncs each file (cheaper than flushing the whole file system).
            let batched = plan.writes.count >= Self.syncFileSystemThreshold
            for write in plan.writes {
                let name = Self.folderName(of: write.path)
                let temporary = FileSystem.temporaryName()
                try folders[name]!.writeNewFile(temporary, write.bytes, sync: !batched)
                renames.append(.init(from: name + "/" + temporary, to: write.path))
            }
            if batched, try !root.syncFileSystem() {
                for rename in renames {
                    try folders[Self.folderName(of: rename.from)]!.syncFile(Self.fileName(of: rename.from))
                }
            }
            if needsJournal {
                let journal = try ArchiveEncoder().encodeBytes(
                    JournalArchive(renames: renames, removals: plan.removals),
                    kind: .journal
                )
                try root.writeNewFile(FileNames.journalFile, journal, sync: true)
                try root.sync()
            }
        } catch {
            for rename in renames {
                try? folders[Self.folderName(of: rename.from)]!.remove(Self.fileName(of: rename.from))
            }
            if needsJournal { try? root.remove(FileNames.journalFile) }
            throw error
        }
        do {
            try apply(JournalArchive(renames: renames, removals: plan.removals), folders: folders)
            if needsJournal { try root.remove(FileNames.journalFile) }
        } catch let error as StorageError {
            var interrupted = error
            interrupted.message += " (the commit is recorded in the journal and completes when the store is next used)"
            interrupted.underlying = error
            throw interrupted
        }
    }

    /// The collection folder of a path relative to the store folder (`c-…/name`).
    private static func folderName(of relative: String) -> String {
        String(relative.prefix { $0 != "/" })
    }

    /// The file name of a path relative to the store folder (`c-…/name`).
    private static func fileName(of relative: String) -> String {
        String(relative[relative.index(after: relative.firstIndex(of: "/")!)...])
    }

    /// Performs a journal's renames and removals, skipping those already done, then fsyncs
    /// every folder touched. A folder missing from `folders` is opened; one that no longer exists
    /// has nothing left to rename or remove.
    private func apply(_ journal: JournalArchive, folders: [String: Folder] = [:]) throws {
        var folders = folders
        var touched = Set<String>()
        func folder(_ relative: String) throws -> Folder? {
            let name = Self.folderName(of: relative)
            if folders[name] == nil { folders[name] = try root.subfolder(name) }
            if folders[name] != nil { touched.insert(name) }
            return folders[name]
        }
        for rename in journal.renames {
            guard let folder = try folder(rename.to) else { continue }
            let source = Self.fileName(of: rename.from)
            if folder.exists(source) { try folder.rename(source, to: Self.fileName(of: rename.to)) }
        }
        for removal in journal.removals {
            try folder(removal)?.remove(Self.fileName(of: removal))
        }
        for name in touched.sorted() { try folders[name]!.sync() }
    }

    // MARK: Recovery

    /// Completes or undoes a commit that a crash interrupted: a journal that reads back intact
    /// is rolled forward; a torn one is removed with the temporary files (the commit never
    /// happened). Call with the lock file locked exclusively.
    /// - Returns: whether a journal was rolled forward (the store changed).
    @discardableResult
    func recover() throws -> Bool {
        guard let bytes = try root.readFile(FileNames.journalFile) else { return false }
        let journal: JournalArchive
        do {
            journal = try ArchiveDecoder().decode(JournalArchive.self, from: bytes, path: journalPath, kind: .journal)
            // A rename stays inside one folder (`renameat` on one descriptor).
            guard
                journal.renames.allSatisfy({
                    isValid($0.from) && isValid($0.to) && Self.folderName(of: $0.from) == Self.folderName(of: $0.to)
                }),
                journal.removals.allSatisfy(isValid)
            else { throw StorageError(.corrupt, "the journal names a path outside the store", path: journalPath) }
        } catch {
            try root.remove(FileNames.journalFile)
            try root.sync()
            try removeTemporaryFiles()
            return false
        }
        try apply(journal)
        try root.remove(FileNames.journalFile)
        try root.sync()
        return true
    }

    /// Whether a journal path is `c-…/name`, inside a collection folder.
    private func isValid(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasPrefix(FileNames.collectionPrefix), !parts[1].isEmpty else { return false }
        return parts.allSatisfy { $0 != "." && $0 != ".." && !$0.contains("\0") }
    }

    /// Removes the temporary files of commits that never happened. Call with the lock file
    /// locked exclusively and no journal present. A collection folder that is a symbolic link
    /// is left alone (never followed); loading refuses it.
    func removeTemporaryFiles() throws {
        for name in try root.list() {
            if name.hasPrefix(FileNames.temporaryPrefix) {
                try root.remove(name)
            } else if name.hasPrefix(FileNames.collectionPrefix) {
                guard let folder = try? root.subfolder(name) else { continue }
                for file in try folder.list() where file.hasPrefix(FileNames.temporaryPrefix) {
                    try folder.remove(file)
                }
            }
        }
    }
}
