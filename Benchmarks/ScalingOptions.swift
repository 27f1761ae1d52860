import Storage

// Options of the scaling mode that change what is stored, set once from the command line before
// anything runs (main.swift) and only read afterwards.

/// `--indexed`: `Person` declares an index on `age` and a unique index on `email`, and the raw
/// SQLite baseline creates the same two indexes (SQLite only: the other baselines keep none).
nonisolated(unsafe) var benchmarkIndexes = false

/// `--raw-sqlite-pragmas`: pragmas the raw SQLite baseline runs after its own
/// (`cache_size=-65536`, ...), to measure what a setting does to the same statements.
nonisolated(unsafe) var rawSQLitePragmas: [String] = []

/// `--sqlite-synchronous full`: ours opened with `synchronous: .full`, the baseline with
/// `PRAGMA synchronous=FULL`.
nonisolated(unsafe) var sqliteSynchronousFull = false

extension Person: StorableModel {
    /// With `--indexed`: `age`, and `email` unique (emails are random words: inserts land all over
    /// the unique index, the case where a page cache smaller than the index shows).
    static var indexes: [IndexDefinition] {
        benchmarkIndexes ? [IndexDefinition(["age"]), IndexDefinition(["email"], unique: true)] : []
    }
}
