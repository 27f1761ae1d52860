internal import CPostgreSQL
import Foundation
import Storage

/// The rows of one single-row-mode query, read one result at a time; or, once another statement
/// needed the connection, from a buffer holding the rest. It ends its statement when released
/// (`deinit` reads what the server still sends), so a stream dropped early never leaves the
/// connection out of step.
final class PostgreSQLStream {
    private unowned let connection: PostgreSQLConnection
    private let context: String
    private let collection: String?
    /// The result of the row handed out last: the row reads from it until the next one.
    private var current: PostgreSQLResult?
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

    deinit {
        finish()
    }

    /// The next row, or `nil` at the end.
    func next() throws -> (any StorageRow)? {
        current = nil
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
        switch result.status {
        case PGRES_SINGLE_TUPLE:
            current = result
            let types = self.types ?? PostgreSQLRow.types(of: result.handle)
            self.types = types
            return PostgreSQLRow(result: result.handle, types: types)
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            finish()
            return nil
        default:
            let error = connection.streamFailure(result, context, collection: collection)
            finish()
            throw error
        }
    }

    /// Reads and discards whatever the server still sends for this query.
    func finish() {
        current = nil
        guard !isDone else { return }
        isDone = true
        while connection.nextResult() != nil {}
    }

    /// Copies the remaining rows into memory. The current row stays valid: the caller may still
    /// be reading it.
    func buffer() {
        var rows: [BufferedRow] = []
        while !isDone, let result = connection.nextResult() {
            switch result.status {
            case PGRES_SINGLE_TUPLE:
                let row = PostgreSQLRow(result: result.handle, types: PostgreSQLRow.types(of: result.handle))
                rows.append(BufferedRow(values: (0..<row.types.count).map { row.value(at: $0) }))
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                break
            default:
                deferredError = connection.streamFailure(result, context, collection: collection)
            }
        }
        isDone = true
        buffered = rows
        bufferedIndex = 0
    }
}
