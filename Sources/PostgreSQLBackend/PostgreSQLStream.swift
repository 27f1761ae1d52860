internal import CPostgreSQL
import Foundation
import Storage

/// The rows of one single-row-mode query, read one result at a time; or, once another statement
/// needed the connection, from a buffer holding the rest.
final class PostgreSQLStream {
    private unowned let connection: PostgreSQLConnection
    private let context: String
    private let collection: String?
    private var current: OpaquePointer?
    private var buffered: [BufferedRow]?
    private var bufferedIndex = 0
    private var deferredError: StorageError?
    private var isDone = false
    /// The column types, the same in every row's result: read from the first.
    private var types: [Oid]?

    init(connection: PostgreSQLConnection, context: String, collection: String?) {
        self.connection = connection
        self.context = context
        self.collection = collection
    }

    /// The next row, or `nil` at the end.
    func next() throws -> (any StorageRow)? {
        if let current {
            PQclear(current)
            self.current = nil
        }
        if let buffered {
            if bufferedIndex < buffered.count {
                bufferedIndex += 1
                return buffered[bufferedIndex - 1]
            }
            if let deferredError { throw deferredError }
            return nil
        }
        guard !isDone else { return nil }
        guard let result = connection.nextResult() else {
            isDone = true
            return nil
        }
        switch PQresultStatus(result) {
        case PGRES_SINGLE_TUPLE:
            current = result
            let types = self.types ?? PostgreSQLRow.types(of: result)
            self.types = types
            return PostgreSQLRow(result: result, types: types)
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            PQclear(result)
            finish()
            return nil
        default:
            let error = connection.streamFailure(result, context, collection: collection)
            PQclear(result)
            finish()
            throw error
        }
    }

    /// Reads and discards whatever the server still sends for this query.
    func finish() {
        if let current {
            PQclear(current)
            self.current = nil
        }
        guard !isDone else { return }
        isDone = true
        while let result = connection.nextResult() { PQclear(result) }
    }

    /// Copies the remaining rows into memory. The current row stays valid: the caller may still
    /// be reading it.
    func buffer() {
        var rows: [BufferedRow] = []
        while !isDone, let result = connection.nextResult() {
            switch PQresultStatus(result) {
            case PGRES_SINGLE_TUPLE:
                let row = PostgreSQLRow(result: result, types: PostgreSQLRow.types(of: result))
                rows.append(BufferedRow(values: (0..<row.types.count).map { row.value(at: $0) }))
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                break
            default:
                deferredError = connection.streamFailure(result, context, collection: collection)
            }
            PQclear(result)
        }
        isDone = true
        buffered = rows
        bufferedIndex = 0
    }
}
