internal import CPostgreSQL
import Foundation
import Storage

/// The rows of a query read through a cursor, one `FETCH` result (a batch) at a time; the next
/// batch is asked for before the current one is read. It reads the batch in flight when
/// released (`deinit`), so a stream dropped early never leaves the connection out of step.
final class PostgreSQLCursorStream {
    /// The rows of the first batch, sent with the `DECLARE`: a small result needs no second
    /// round trip, and rows of unknown size (a record may hold megabytes) are few.
    static let firstBatch = 32
    /// The most rows a batch holds.
    static let largestBatch = 16_384
    /// How much a batch may grow over the one before (rows that grow in size are then still
    /// read in bounded batches).
    static let growth = 8
    /// About how many bytes of rows a batch holds once the row size is known (at most two
    /// batches are in memory: the one read, the one being received).
    static let batchBytes = 2 << 20
    /// The fewest rows a `FETCH` asks for whose answer is read on a thread of its own
    /// (`PostgreSQLFetchReader`) while the batch before is decoded; a smaller one is read when
    /// its rows are needed (a thread costs more than the overlap saves).
    static let backgroundBatch = 2_048

    static func fetchSQL(_ size: Int) -> String {
        "FETCH FORWARD \(size) FROM " + PostgreSQLConnection.cursorName
    }

    private unowned let connection: PostgreSQLConnection
    private let context: String
    private let collection: String?
    /// The batch whose rows are being read.
    private var current: PostgreSQLResult?
    private var row: Int32 = 0
    private var rowCount: Int32 = 0
    /// The answer to the `FETCH` in flight, when a statement needed the connection before the
    /// stream read it.
    private var received: Result<PostgreSQLResult, StorageError>?
    /// Whether a `FETCH` is in flight or received and not yet read.
    private var fetching = false
    /// Reading the answer to the `FETCH` in flight, when it was large enough.
    private var reader: PostgreSQLFetchReader?
    /// Whether the last batch asked for was short: the cursor has no more rows.
    private var isLast = false
    private var types: [Oid] = []

    init(connection: PostgreSQLConnection, first: PostgreSQLResult, context: String, collection: String?) {
        self.connection = connection
        self.context = context
        self.collection = collection
        types = PostgreSQLRow.types(of: first.handle)
        begin(first, asked: Self.firstBatch)
    }

    deinit {
        finish()
    }

    /// Starts reading `batch`, of at most `asked` rows, and asks for the next one when it was
    /// full.
    private func begin(_ batch: PostgreSQLResult, asked: Int) {
        current = batch
        row = 0
        rowCount = PQntuples(batch.handle)
        guard Int(rowCount) >= asked else {
            isLast = true
            return
        }
        let bytesPerRow = max(1, PQresultMemorySize(batch.handle) / max(1, Int(rowCount)))
        let size = max(1, min(Self.largestBatch, asked * Self.growth, Self.batchBytes / bytesPerRow))
        nextSize = size
        fetching = connection.sendFetch(size, for: self)
        if !fetching {
            received = .failure(connection.streamFailure(nil, context, collection: collection))
        } else if size >= Self.backgroundBatch {
            reader = PostgreSQLFetchReader.start(connection)
        }
    }

    /// The rows asked for by the `FETCH` in flight.
    private var nextSize = 0

    /// Reads the answer to the `FETCH` in flight now (a statement needs the connection), or
    /// waits for its reader.
    func receive() {
        guard fetching, received == nil else { return }
        if let reader {
            self.reader = nil
            connection.fetchesReadAside += 1
            received = connection.fetchAnswered(reader.wait(), context, collection: collection)
        } else {
            received = connection.receiveFetch(context, collection: collection)
        }
    }

    /// The next row, or `nil` at the end.
    func next() throws -> (any StorageRow)? {
        while true {
            if let current {
                if row < rowCount {
                    defer { row += 1 }
                    return PostgreSQLRow(result: current.handle, row: row, types: types)
                }
                self.current = nil
            }
            guard !isLast else { return nil }
            receive()
            guard let answer = received else { return nil }
            received = nil
            fetching = false
            switch answer {
            case .success(let batch): begin(batch, asked: nextSize)
            case .failure(let error):
                isLast = true
                throw error
            }
        }
    }

    /// Reads and discards the batch in flight and frees the current one. The cursor itself
    /// closes with its transaction.
    func finish() {
        current = nil
        receive()
        received = nil
        fetching = false
        isLast = true
    }
}
