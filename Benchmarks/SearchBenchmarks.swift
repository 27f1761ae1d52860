import CSQLite
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// A short document of the search benchmark: a title of 5 to 10 words.
struct BenchTitle: Codable, StorableModel {
    static let collectionName = "titles"
    static let indexes: [IndexDefinition] = [.fullText(["title"])]
    var id: Int64
    var title: String
}

/// The same records without a full-text index, for the data's own size.
struct PlainTitle: Codable, StorableModel {
    static let collectionName = "titles"
    var id: Int64
    var title: String
}

/// `--search`: full-text indexing and two-word top-20 queries over short titles, ours on SQLite
/// and LMDB beside raw FTS5 (`CREATE VIRTUAL TABLE … USING fts5`, INSERTs of one prepared
/// statement in one transaction; `MATCH … ORDER BY bm25 LIMIT 20`), with the sizes on disk.
enum SearchBenchmarks {
    /// Words of a vocabulary of 20,000, drawn with Zipf's law (s = 1), as titles have them.
    struct Titles {
        let vocabulary: [String]
        let cumulative: [Double]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15

        init() {
            var words: [String] = []
            let syllables = ["ka", "lo", "mi", "ne", "ra", "su", "ti", "vo", "za", "qe", "do", "fu", "gi", "ha", "ju"]
            var index = 0
            while words.count < 20_000 {
                var value = index
                var word = ""
                repeat {
                    word += syllables[value % syllables.count]
                    value /= syllables.count
                } while value > 0
                words.append(word)
                index += 1
            }
            vocabulary = words
            var total = 0.0
            cumulative = (1...words.count).map { rank in
                total += 1 / Double(rank)
                return total
            }
        }

        mutating func random() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }

        mutating func word() -> String {
            let target = random() * cumulative[cumulative.count - 1]
            var low = 0
            var high = cumulative.count - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] < target { low = middle + 1 } else { high = middle }
            }
            return vocabulary[low]
        }

        mutating func title() -> String {
            let count = 5 + Int(random() * 6)
            return (0..<count).map { _ in word() }.joined(separator: " ")
        }
    }

    static func size(of path: String) -> Int {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isFolder) else { return 0 }
        if !isFolder.boolValue {
            let own = (try? manager.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            return own + size(of: path + "-wal")
        }
        var total = 0
        for case let name as String in manager.enumerator(atPath: path) ?? NSEnumerator() {
            total += (try? manager.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0
        }
        return total
    }

    static func run(count: Int, repetitions: Int, backends: [String], directory: URL) throws {
        var generator = Titles()
        progress("making \(count) titles")
        let titles = (0..<count).map { BenchTitle(id: Int64($0 + 1), title: generator.title()) }
        // Two-word queries of words of middling frequency (ranks 100 to 5,000), fixed by the seed.
        let queries = (0..<100).map { _ in
            let first = generator.vocabulary[100 + Int(generator.random() * 4_900)]
            let second = generator.vocabulary[100 + Int(generator.random() * 4_900)]
            return first + " " + second
        }
        // One-word queries of the same ranks, for the query rows that find something at every size.
        let clock = ContinuousClock()
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

        // Raw FTS5.
        let rawPath = directory.appendingPathComponent("raw-fts5.sqlite").path
        var db: OpaquePointer?
        guard sqlite3_open_v2(rawPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            fatalError("cannot open \(rawPath)")
        }
        func exec(_ sql: String) {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                fatalError(String(cString: sqlite3_errmsg(db)))
            }
        }
        exec("PRAGMA journal_mode=WAL")
        exec("PRAGMA synchronous=NORMAL")
        exec("CREATE VIRTUAL TABLE titles USING fts5(title)")
        progress("raw FTS5: inserting")
        let rawInsert = clock.measure {
            exec("BEGIN")
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "INSERT INTO titles (rowid, title) VALUES (?, ?)", -1, &statement, nil)
            for title in titles {
                sqlite3_bind_int64(statement, 1, title.id)
                sqlite3_bind_text(statement, 2, title.title, -1, storage_sqlite_transient())
                guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(db))) }
                sqlite3_reset(statement)
            }
            sqlite3_finalize(statement)
            exec("COMMIT")
        }
        exec("PRAGMA wal_checkpoint(TRUNCATE)")
        var rawQuery: OpaquePointer?
        sqlite3_prepare_v2(
            db,
            "SELECT rowid, title FROM titles WHERE titles MATCH ? ORDER BY bm25(titles), rowid LIMIT 20",
            -1,
            &rawQuery,
            nil
        )
        var rawFound = 0
        func runRaw(_ query: String) {
            sqlite3_bind_text(rawQuery, 1, query, -1, storage_sqlite_transient())
            while sqlite3_step(rawQuery) == SQLITE_ROW {
                rawFound += 1
                consume(sqlite3_column_text(rawQuery, 1))
            }
            sqlite3_reset(rawQuery)
        }
        for query in queries { runRaw(query) }  // warm-up
        var rawTimes: [Double] = []
        for _ in 0..<repetitions {
            for query in queries { rawTimes.append(seconds(clock.measure { runRaw(query) })) }
        }
        sqlite3_finalize(rawQuery)
        sqlite3_close_v2(db)
        let rawSize = size(of: rawPath)
        let rawRate = Double(count) / seconds(rawInsert)
        let rawMedian = median(rawTimes)
        print("search, \(count) titles of 5–10 words (Zipf over 20,000 words), 100 two-word queries × \(repetitions)")
        print(
            String(
                format: "raw FTS5: insert %.0f rows/s; top-20 query median %.3f ms; file %.1f MB",
                rawRate,
                rawMedian * 1000,
                Double(rawSize) / 1e6
            )
        )

        for backend in backends where backend == "sqlite" || backend == "lmdb" {
            let path = directory.appendingPathComponent("search-\(backend)").path
            let plainPath = directory.appendingPathComponent("plain-\(backend)").path
            func open(_ path: String) throws -> ObjectStore {
                backend == "sqlite"
                    ? try ObjectStore(backend: .sqlite(path: path)) : try ObjectStore(backend: .lmdb(path: path))
            }
            let store = try open(path)
            progress("\(backend): indexing")
            let insert = try clock.measure { try store.save(contentsOf: titles) }
            var times: [Double] = []
            var found = 0
            for query in queries { found += try store.search(BenchTitle.self, matching: query, limit: 20).count }
            for _ in 0..<repetitions {
                for query in queries {
                    times.append(
                        seconds(
                            try clock.measure { consume(try store.search(BenchTitle.self, matching: query, limit: 20)) }
                        )
                    )
                }
            }
            try store.close()
            let plain = try open(plainPath)
            try plain.save(contentsOf: titles.map { PlainTitle(id: $0.id, title: $0.title) })
            try plain.close()
            let rate = Double(count) / seconds(insert)
            let ourMedian = median(times)
            let total = size(of: path)
            let data = size(of: plainPath)
            print(
                String(
                    format:
                        "%@: indexing save(contentsOf:) %.0f rows/s = %.2f× raw FTS5 INSERT; top-20 query median %.3f ms"
                        + " = %.2f× raw FTS5's time (found %d, FTS5 %d); store %.1f MB = data %.1f MB + index %.1f MB",
                    backend,
                    rate,
                    rate / rawRate,
                    ourMedian * 1000,
                    ourMedian / rawMedian,
                    found,
                    rawFound / (repetitions + 1),
                    Double(total) / 1e6,
                    Double(data) / 1e6,
                    Double(total - data) / 1e6
                )
            )
        }
    }
}
