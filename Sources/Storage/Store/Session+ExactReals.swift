/// Integers and real columns: a Double holds every integer up to 2^53 in magnitude and only some
/// past it, so an integer stored in a real column, or in an integer column widened to real, would
/// come back as another number (9,007,199,254,740,993 as 9,007,199,254,740,992). Such a write is
/// refused instead, naming the record and the column, and nothing of it is stored.
extension Session {
    /// Whether a Double holds `number` exactly.
    @inline(__always)
    static func realHoldsExactly(_ number: Int64) -> Bool {
        Int64(exactly: Double(number)) == number
    }

    /// The error for `number` arriving in real column `column`, which would round it.
    static func inexactReal(_ number: Int64, column: String) -> StorageError {
        StorageError(
            .valueOutOfRange,
            "column \(Identifier.quoted(column)) is real, and no Double holds the integer \(number) exactly"
                + " (it would be stored as \(Double(number))); nothing was stored",
            column: column
        )
    }

    /// Refuses to widen an integer column of `existing` to the real `requested` asks for while the
    /// column holds an integer that no Double holds exactly: each backend's widening (SQLite's
    /// rebuild, PostgreSQL's `ALTER COLUMN … TYPE double precision`, the others' conversion) would
    /// round it. Reads only the records past ±2^53, where such integers are.
    /// - Throws: ``StorageError`` with `.valueOutOfRange` naming the first such record.
    func checkWideningToReal(of requested: CollectionSchema, from existing: CollectionSchema) throws {
        for column in requested.columns where column.type == .real {
            guard let stored = existing.column(named: column.name), stored.type == .integer else { continue }
            let exact: Int64 = 1 << 53
            let request = ScanRequest(
                collection: existing.name,
                columns: [existing.primaryKey, stored.name],
                predicate: Column(stored.name) > exact || Column(stored.name) < -exact
            )
            var found: (key: StorageValue, number: Int64)?
            try reader.scan(request) { row in
                guard case .integer(let number) = row.value(at: 1), !Self.realHoldsExactly(number) else { return true }
                found = (row.value(at: 0), number)
                return false
            }
            if let found {
                throw StorageError(
                    .valueOutOfRange,
                    "record \(found.key): column \(Identifier.quoted(stored.name)) holds the integer \(found.number),"
                        + " which no Double holds exactly, so it cannot become a real column (\(found.number) would"
                        + " read back as \(Double(found.number))); nothing was stored",
                    collection: existing.name,
                    column: stored.name,
                    key: found.key
                )
            }
        }
    }
}
