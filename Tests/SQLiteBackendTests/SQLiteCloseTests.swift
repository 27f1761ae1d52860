import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

private struct Note: Codable, Equatable {
    var id: Int
    var text: String
}

/// Closing the last store on a database leaves one file: the WAL is checkpointed into the
/// database and removed, even after reads have put reader connections in the pool.
@Test func closingAStoreCheckpointsItsWALIntoTheDatabaseFile() throws {
    try TemporaryDirectory.with("sqlite-close") { directory in
        let path = directory.appendingPathComponent("notes.sqlite").path
        let notes = (1...200).map { Note(id: $0, text: String(repeating: "n", count: $0)) }
        do {
            let store = try ObjectStore(backend: .sqlite(path: path))
            try store.save(contentsOf: notes)
            // Reads open reader connections; they must not keep the writer from checkpointing.
            #expect(try store.fetchAll(Note.self).count == 200)
            #expect(try store.fetch(Note.self, id: 7) == notes[6])
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        // The data is in the database file alone: a copy of it without the other files reads it all.
        let copy = directory.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let reopened = try ObjectStore(backend: .sqlite(path: copy))
        #expect(try reopened.fetchAll(Note.self, orderBy: [.ascending("id")]) == notes)
    }
}
