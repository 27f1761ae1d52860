/// What `ObjectStore.copy(to:collections:mode:verifying:batchSize:progress:)` did.
public struct StoreCopyReport: Sendable, Hashable {
    /// One collection's part of a copy.
    public struct CollectionReport: Sendable, Hashable {
        /// The collection's name, as the source stores it.
        public var name: String
        /// The records copied.
        public var records: Int
        /// Whether both stores' count and digest of the collection matched afterwards; `false`
        /// when verification was not asked for (a mismatch throws instead).
        public var verified: Bool

        /// Creates a collection report.
        /// - Parameters:
        ///   - name: the collection.
        ///   - records: the records copied.
        ///   - verified: whether verification matched.
        public init(name: String, records: Int, verified: Bool) {
            self.name = name
            self.records = records
            self.verified = verified
        }
    }

    /// Each collection copied, in the order they were copied (reserved ones such as `_settings`
    /// included).
    public var collections: [CollectionReport]

    /// Creates a report.
    /// - Parameter collections: the collections copied.
    public init(collections: [CollectionReport]) {
        self.collections = collections
    }

    /// The records copied, over every collection.
    public var records: Int { collections.reduce(0) { $0 + $1.records } }

    /// The report of `collection` (compared ignoring ASCII case), if it was copied.
    /// - Parameter collection: the collection's name.
    /// - Returns: its report, or `nil`.
    public subscript(collection: String) -> CollectionReport? {
        let folded = Identifier.folded(collection)
        return collections.first { Identifier.folded($0.name) == folded }
    }
}
