/// How far a copy, a verification or an import has come, reported after each batch.
public struct StoreCopyProgress: Sendable, Hashable {
    /// What is being done.
    public enum Phase: String, Sendable, Hashable {
        /// Records are being read from the source and written to the destination.
        case copying
        /// Both stores are being read and their digests compared.
        case verifying
        /// An import's input is being read and checked, and its column types found (the first
        /// pass of a CSV import, outside any transaction; `total` is unknown).
        case reading
        /// An import's records are being stored (`total` is the records the first pass counted).
        case importing
    }

    /// The phase this report belongs to.
    public var phase: Phase
    /// The collection being worked on.
    public var collection: String
    /// The records done so far in this phase, over every collection.
    public var records: Int
    /// The records the phase will do in all (counted before it started), when known.
    public var total: Int?

    /// Creates a progress report.
    /// - Parameters:
    ///   - phase: what is being done.
    ///   - collection: the collection being worked on.
    ///   - records: the records done so far.
    ///   - total: the records to do in all, if known.
    public init(phase: Phase, collection: String, records: Int, total: Int?) {
        self.phase = phase
        self.collection = collection
        self.records = records
        self.total = total
    }
}
