internal import CLMDB
import Storage

/// The layout of one collection's native full-text index: a named database of its own,
/// `f:` + the folded collection name, holding
///
/// - `[0]`: the statistics (varints: field count, N, total words, next document number);
/// - `K` + the key's bytes (`LMDBKeyCoding`): the record's document number (8 bytes, big-endian);
/// - `D` + the document number: the forward entry, the key (as a record field) then the
///   record's distinct words, so an overwrite or delete finds the blocks it is in;
/// - `P` + word + `0` + a document number (big-endian): a block of the word's postings, the
///   number a lower bound of the block's documents. The value: the last document number
///   (8 bytes, big-endian), then per posting the varints of its document number's delta from
///   the previous one (the first from the key's number), the record's length in words (all
///   fields), its number of occurrences n, and n pairs of field and position.
///
/// Document numbers only grow, so postings of new records are appended to each word's last
/// block; a block is split once it passes `blockBound` bytes.
enum LMDBFullText {
    static func database(_ collection: String) -> String { "f:" + Identifier.folded(collection) }
    static let statisticsKey: [UInt8] = [0]
    static let keyTag = UInt8(ascii: "K")
    static let documentTag = UInt8(ascii: "D")
    static let postingTag = UInt8(ascii: "P")
    /// The size past which a block is closed and the next posting starts a new one (it keeps
    /// a block within a leaf node of a 4 KiB page).
    static let blockBound = 1800
    /// The bytes of a word kept in a block key: longer words are cut (at a scalar boundary),
    /// so words sharing their first 400 bytes share postings.
    static let maximumWordBytes = 400

    struct Statistics {
        var fields: Int
        var documents: Int
        var tokens: Int
        var nextDocument: Int

        var encoded: [UInt8] {
            var bytes: [UInt8] = []
            for value in [fields, documents, tokens, nextDocument] {
                LMDBRecordCoding.appendVarint(UInt64(max(value, 0)), to: &bytes)
            }
            return bytes
        }

        init(fields: Int) {
            self.fields = fields
            documents = 0
            tokens = 0
            nextDocument = 1
        }

        init?(_ bytes: UnsafeRawBufferPointer) {
            var offset = 0
            var values: [Int] = []
            for _ in 0..<4 {
                guard let value = LMDBRecordCoding.readVarint(bytes, &offset) else { return nil }
                values.append(Int(value))
            }
            (fields, documents, tokens, nextDocument) = (values[0], values[1], values[2], values[3])
        }
    }

    static func appendBigEndian(_ value: Int, to bytes: inout [UInt8]) {
        let value = UInt64(value)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(bytes[index]) }
        return Int(value)
    }

    static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Int {
        Int(LMDBRecordCoding.readVarint(bytes, &offset) ?? 0)
    }

    /// The bytes of `word` as block keys hold them.
    static func wordBytes(_ word: String) -> [UInt8] {
        let bytes = Array(word.utf8)
        guard bytes.count > maximumWordBytes else { return bytes }
        var end = maximumWordBytes
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(bytes[..<end])
    }

    static func blockPrefix(_ word: [UInt8]) -> [UInt8] { [postingTag] + word + [0] }

    /// The bytes a block adds around its word and postings: the key's tag, separator and first
    /// document number, and the value's last document number.
    static let blockKeyOverhead = 18

    static func documentKey(_ document: Int) -> [UInt8] {
        var bytes = [documentTag]
        appendBigEndian(document, to: &bytes)
        return bytes
    }

    /// One posting decoded from a block.
    struct Posting {
        var document: Int
        var length: Int
        var hits: Int
        /// By field; filled only when asked for.
        var positions: [Int: [Int]]
    }

    /// The postings of a block (`key` and `value` as stored), in document order.
    static func postings(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, positions: Bool) -> [Posting] {
        guard key.count >= 9, value.count >= 8 else { return [] }
        var document = readBigEndian(key, at: key.count - 8)
        var offset = 8
        var found: [Posting] = []
        while offset < value.count {
            document += read(value, &offset)
            let length = read(value, &offset)
            let hits = read(value, &offset)
            var posting = Posting(document: document, length: length, hits: hits, positions: [:])
            for _ in 0..<hits {
                let field = read(value, &offset)
                let position = read(value, &offset)
                if positions { posting.positions[field, default: []].append(position) }
            }
            found.append(posting)
        }
        return found
    }

    static func encode(_ postings: [Posting], base: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        appendBigEndian(postings.last?.document ?? base, to: &bytes)
        var previous = base
        for posting in postings {
            appendPosting(posting, after: previous, to: &bytes)
            previous = posting.document
        }
        return bytes
    }

    static func appendPosting(_ posting: Posting, after previous: Int, to bytes: inout [UInt8]) {
        LMDBRecordCoding.appendVarint(UInt64(posting.document - previous), to: &bytes)
        LMDBRecordCoding.appendVarint(UInt64(posting.length), to: &bytes)
        LMDBRecordCoding.appendVarint(UInt64(posting.hits), to: &bytes)
        for field in posting.positions.keys.sorted() {
            for position in posting.positions[field]! {
                LMDBRecordCoding.appendVarint(UInt64(field), to: &bytes)
                LMDBRecordCoding.appendVarint(UInt64(position), to: &bytes)
            }
        }
    }
}

extension LMDBReadTransaction {
    /// The handle of `collection`'s full-text database, if it was ever made.
    func fullTextHandle(_ collection: String) -> MDB_dbi? {
        let name = LMDBFullText.database(collection)
        if let writer = self as? LMDBWriteTransaction, let dbi = writer.openedHandles[name] { return dbi }
        return environment.handle(name)
    }

    /// The statistics of `collection`'s index, `nil` when the engine keeps none.
    func fullTextStatistics(_ dbi: MDB_dbi, _ collection: String) throws -> LMDBFullText.Statistics? {
        try read(dbi, key: LMDBFullText.statisticsKey, collection: collection) { bytes in
            guard let bytes else { return nil }
            guard let statistics = LMDBFullText.Statistics(bytes) else { throw damaged(collection) }
            return statistics
        }
    }

    /// Calls `body` with every block whose key starts with `prefix`.
    func forEachBlock(
        _ dbi: MDB_dbi,
        prefix: [UInt8],
        collection: String,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try forEachEntry(dbi, from: prefix, through: nil, collection: collection) { key, value in
            guard key.starts(with: prefix) else { return false }
            try body(key, value)
            return true
        }
    }

    /// The records `atom` occurs in, with the number of times and their lengths.
    private func fullTextOccurrences(
        _ atom: SearchQuery.Atom,
        _ dbi: MDB_dbi,
        _ collection: String
    ) throws -> [Int: (hits: Int, length: Int)] {
        var result: [Int: (hits: Int, length: Int)] = [:]
        switch atom {
        case .word(let word):
            try forEachBlock(
                dbi,
                prefix: LMDBFullText.blockPrefix(LMDBFullText.wordBytes(word)),
                collection: collection
            ) {
                key,
                value in
                for posting in LMDBFullText.postings(key: key, value: value, positions: false) {
                    result[posting.document] = (posting.hits, posting.length)
                }
            }
        case .prefix(let prefix):
            try forEachBlock(
                dbi,
                prefix: [LMDBFullText.postingTag] + LMDBFullText.wordBytes(prefix),
                collection: collection
            ) { key, value in
                for posting in LMDBFullText.postings(key: key, value: value, positions: false) {
                    let earlier = result[posting.document]?.hits ?? 0
                    result[posting.document] = (earlier + posting.hits, posting.length)
                }
            }
        case .phrase(let words):
            var lists: [[Int: LMDBFullText.Posting]] = []
            for word in words {
                var list: [Int: LMDBFullText.Posting] = [:]
                try forEachBlock(
                    dbi,
                    prefix: LMDBFullText.blockPrefix(LMDBFullText.wordBytes(word)),
                    collection: collection
                ) { key, value in
                    for posting in LMDBFullText.postings(key: key, value: value, positions: true) {
                        list[posting.document] = posting
                    }
                }
                lists.append(list)
            }
            guard let shortest = lists.indices.min(by: { lists[$0].count < lists[$1].count }) else { return [:] }
            for (document, _) in lists[shortest] {
                let postings = lists.compactMap { $0[document] }
                guard postings.count == lists.count else { continue }
                let hits = SearchRanking.phraseHits(postings.map(\.positions))
                if hits > 0 { result[document] = (hits, postings[0].length) }
            }
        }
        return result
    }

    /// The key of the record numbered `document`.
    func fullTextKey(_ dbi: MDB_dbi, _ document: Int, _ collection: String) throws -> StorageValue? {
        try read(dbi, key: LMDBFullText.documentKey(document), collection: collection) { bytes in
            guard let bytes, bytes.count > 1 else { return nil }
            return LMDBRecordCoding.value(in: bytes, tagOffset: 1)
        }
    }
}

extension LMDBReadTransaction: FullTextSearchingReadTransaction {
    func hasFullTextIndex(of collection: String) throws -> Bool {
        try checkActive()
        guard let dbi = fullTextHandle(collection) else { return false }
        return try fullTextStatistics(dbi, collection) != nil
    }

    func searchFullText(
        in collection: String,
        matching query: SearchQuery,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> [StorageValue]? {
        try checkActive()
        // The store filters by the predicate.
        guard predicate == nil else { return nil }
        if let writer = self as? LMDBWriteTransaction { try writer.flushFullText() }
        guard let dbi = fullTextHandle(collection), let statistics = try fullTextStatistics(dbi, collection) else {
            return []
        }
        let scores = try SearchRanking.rank(query, documents: statistics.documents, tokens: statistics.tokens) {
            try fullTextOccurrences($0, dbi, collection)
        }
        var ranked = scores.map { (document: $0.key, score: $0.value) }
        ranked.sort { $0.score > $1.score }
        let count = min(limit ?? ranked.count, ranked.count)
        guard count > 0 else { return [] }
        // Ties are broken by key: the keys of every record scoring at least the last one kept.
        let cutoff = ranked[count - 1].score
        var candidates: [(key: StorageValue, score: Double)] = []
        for entry in ranked {
            guard entry.score >= cutoff else { break }
            guard let key = try fullTextKey(dbi, entry.document, collection) else { throw damaged(collection) }
            candidates.append((key, entry.score))
        }
        candidates.sort { $0.score != $1.score ? $0.score > $1.score : StorageValue.compare($0.key, $1.key) < 0 }
        return candidates.prefix(count).map(\.key)
    }
}

extension LMDBWriteTransaction: FullTextIndexingWriteTransaction {
    func createFullTextIndex(of collection: String, fields: [String]) throws -> Bool {
        try checkActive()
        guard !fields.isEmpty, try info(of: collection) != nil else { return false }
        let name = LMDBFullText.database(collection)
        let dbi = try fullTextHandle(collection) ?? createDatabase(name, collection: collection)
        fullTextWriters[Identifier.folded(collection)] = nil
        try check(mdb_drop(txn, dbi, 0), "cannot empty the full-text index", collection: collection)
        try put(
            dbi,
            key: LMDBFullText.statisticsKey,
            value: LMDBFullText.Statistics(fields: fields.count).encoded,
            collection: collection
        )
        return true
    }

    func dropFullTextIndex(of collection: String) throws {
        try checkActive()
        fullTextWriters[Identifier.folded(collection)] = nil
        guard let dbi = fullTextHandle(collection) else { return }
        // Emptied, not deleted, as a dropped collection's databases are (`dropCollection`).
        try check(mdb_drop(txn, dbi, 0), "cannot drop the full-text index", collection: collection)
    }

    func makeFullTextWriter(for collection: String) throws -> (any FullTextIndexWriter)? {
        try checkActive()
        let folded = Identifier.folded(collection)
        if let known = fullTextWriters[folded] { return known }
        guard let dbi = fullTextHandle(collection), let statistics = try fullTextStatistics(dbi, collection) else {
            return nil
        }
        let made = LMDBFullTextWriter(transaction: self, dbi: dbi, collection: collection, statistics: statistics)
        fullTextWriters[folded] = made
        return made
    }

    /// Writes the postings every writer of this transaction holds in memory: before a search
    /// in the transaction and before the commit.
    func flushFullText() throws {
        for writer in fullTextWriters.values { try writer.flush() }
    }
}

/// Writes one collection's native index (`LMDBFullText`) in one write transaction: the key map
/// and forward entries at once, the postings gathered in memory per word and appended to the
/// blocks at `flush()` (before any search of the transaction and at its commit; an abort
/// discards them with the transaction).
final class LMDBFullTextWriter: FullTextIndexWriter {
    private unowned let transaction: LMDBWriteTransaction
    private let dbi: MDB_dbi
    private let collection: String
    private var statistics: LMDBFullText.Statistics
    private var statisticsChanged = false
    /// The postings not yet in blocks, per word.
    private var pending: [String: LMDBFullTextPending] = [:]
    /// The first document number given in this transaction: older ones have no pending postings.
    private let firstNew: Int
    /// About how many bytes of the map the pending postings will take once flushed (their own
    /// bytes, and a block key for each word), for the map's size estimate
    /// (`LMDBWriteTransaction.noteRecordPut`): the postings are written only at the flush.
    private(set) var pendingBytes = 0

    init(transaction: LMDBWriteTransaction, dbi: MDB_dbi, collection: String, statistics: LMDBFullText.Statistics) {
        self.transaction = transaction
        self.dbi = dbi
        self.collection = collection
        self.statistics = statistics
        firstNew = statistics.nextDocument
    }

    private func keyEntry(_ key: StorageValue) throws -> [UInt8] {
        var bytes = [LMDBFullText.keyTag]
        LMDBKeyCoding.append(key, to: &bytes)
        guard bytes.count <= transaction.environment.maximumKeySize else {
            throw StorageError(
                .invalidKey,
                "the key takes \(bytes.count - 1) bytes, too many for the full-text index",
                collection: collection,
                key: key
            )
        }
        return bytes
    }

    func index(_ key: StorageValue, fields: [String]) throws {
        try transaction.checkActive()
        let keyBytes = try keyEntry(key)
        try remove(keyBytes)
        let document = statistics.nextDocument
        statistics.nextDocument += 1
        statistics.documents += 1
        statisticsChanged = true
        // A title has a handful of words: a list searched linearly beats a dictionary, until
        // the list is long (a document of thousands of words would make the search quadratic).
        var order: [String] = []
        var indexes: [String: Int] = [:]
        var occurrences: [(word: Int, field: Int, position: Int)] = []
        var length = 0
        for (field, text) in fields.enumerated() {
            var position = 0
            for token in text.split(separator: " ") {
                var word = String(token)
                if word.utf8.count > LMDBFullText.maximumWordBytes {
                    word = String(decoding: LMDBFullText.wordBytes(word), as: UTF8.self)
                }
                let index: Int
                if let known = order.count > 32 ? indexes[word] : order.firstIndex(of: word) {
                    index = known
                } else {
                    index = order.count
                    order.append(word)
                    if order.count == 33 {
                        for (position, known) in order.enumerated() { indexes[known] = position }
                    } else if order.count > 33 {
                        indexes[word] = index
                    }
                }
                occurrences.append((index, field, position))
                position += 1
            }
            length += position
        }
        statistics.tokens += length
        var forward: [UInt8] = []
        LMDBRecordCoding.appendField(0, key, to: &forward)
        for (index, word) in order.enumerated() {
            LMDBRecordCoding.appendVarint(UInt64(word.utf8.count), to: &forward)
            forward += word.utf8
            let list: LMDBFullTextPending
            if let known = pending[word] {
                list = known
            } else {
                list = LMDBFullTextPending()
                pending[word] = list
                pendingBytes += word.utf8.count + LMDBFullText.blockKeyOverhead + LMDBWriteTransaction.nodeOverhead
            }
            let before = list.bytes.count
            var hits = 0
            for occurrence in occurrences where occurrence.word == index { hits += 1 }
            LMDBRecordCoding.appendVarint(UInt64(document - list.last), to: &list.bytes)
            LMDBRecordCoding.appendVarint(UInt64(length), to: &list.bytes)
            LMDBRecordCoding.appendVarint(UInt64(hits), to: &list.bytes)
            for occurrence in occurrences where occurrence.word == index {
                LMDBRecordCoding.appendVarint(UInt64(occurrence.field), to: &list.bytes)
                LMDBRecordCoding.appendVarint(UInt64(occurrence.position), to: &list.bytes)
            }
            list.last = document
            pendingBytes += list.bytes.count - before
        }
        var number: [UInt8] = []
        LMDBFullText.appendBigEndian(document, to: &number)
        try transaction.put(dbi, key: keyBytes, value: number, collection: collection)
        try transaction.put(dbi, key: LMDBFullText.documentKey(document), value: forward, collection: collection)
    }

    func unindex(_ key: StorageValue) throws {
        try transaction.checkActive()
        try remove(try keyEntry(key))
    }

    /// Takes the record of the key entry `keyBytes` out of the index, if it is there.
    private func remove(_ keyBytes: [UInt8]) throws {
        let found: Int? = try transaction.read(dbi, key: keyBytes, collection: collection) { bytes in
            guard let bytes, bytes.count == 8 else { return nil }
            return LMDBFullText.readBigEndian(bytes, at: 0)
        }
        guard let document = found else { return }
        if document >= firstNew { try flush() }
        let forwardKey = LMDBFullText.documentKey(document)
        let words: [[UInt8]] = try transaction.read(dbi, key: forwardKey, collection: collection) { bytes in
            guard let bytes, bytes.count > 1, let end = LMDBRecordCoding.endOfValue(in: bytes, tagOffset: 1) else {
                throw transaction.damaged(collection)
            }
            var offset = end
            var words: [[UInt8]] = []
            while offset < bytes.count {
                let count = LMDBFullText.read(bytes, &offset)
                guard offset + count <= bytes.count else { throw transaction.damaged(collection) }
                words.append(Array(bytes[offset..<offset + count]))
                offset += count
            }
            return words
        }
        var length = 0
        for word in words { length = try removePosting(of: document, word: word) ?? length }
        try transaction.remove(dbi, key: keyBytes, collection: collection)
        try transaction.remove(dbi, key: forwardKey, collection: collection)
        statistics.documents -= 1
        statistics.tokens -= length
        statisticsChanged = true
    }

    /// Removes the posting of `document` from `word`'s block holding it.
    /// - Returns: the record's length, from the posting; `nil` when none was found.
    private func removePosting(of document: Int, word: [UInt8]) throws -> Int? {
        let prefix = LMDBFullText.blockPrefix(word)
        var bound = prefix
        LMDBFullText.appendBigEndian(document, to: &bound)
        // The block holding `document`: the last one of the word whose first number is not past it.
        var block: (key: [UInt8], postings: [LMDBFullText.Posting])?
        try withCursor { cursor in
            var key = MDB_val()
            var data = MDB_val()
            var rc = bound.withUnsafeBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
            let exact =
                LMDBResultCode(rc) == .success
                && UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size).elementsEqual(bound)
            if !exact {
                rc = mdb_cursor_get(cursor, &key, &data, LMDBResultCode(rc) == .success ? MDB_PREV : MDB_LAST)
            }
            guard LMDBResultCode(rc) == .success else { return }
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            guard keyBytes.count == prefix.count + 8, keyBytes.starts(with: prefix) else { return }
            let value = UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
            block = (Array(keyBytes), LMDBFullText.postings(key: keyBytes, value: value, positions: true))
        }
        guard var (key, postings) = block, let index = postings.firstIndex(where: { $0.document == document }) else {
            return nil
        }
        let length = postings[index].length
        postings.remove(at: index)
        if postings.isEmpty {
            try transaction.remove(dbi, key: key, collection: collection)
        } else {
            let base = key.withUnsafeBytes { LMDBFullText.readBigEndian($0, at: key.count - 8) }
            try transaction.put(dbi, key: key, value: LMDBFullText.encode(postings, base: base), collection: collection)
        }
        key = []
        return length
    }

    private func withCursor(_ body: (OpaquePointer?) throws -> Void) throws {
        var cursor: OpaquePointer?
        try transaction.check(
            mdb_cursor_open(transaction.txn, dbi, &cursor),
            "cannot open a cursor",
            collection: collection
        )
        defer { mdb_cursor_close(cursor) }
        try body(cursor)
    }

    /// Appends the pending postings to their words' last blocks (new blocks past the bound),
    /// and writes the statistics.
    func flush() throws {
        if statisticsChanged {
            try transaction.put(dbi, key: LMDBFullText.statisticsKey, value: statistics.encoded, collection: collection)
            statisticsChanged = false
        }
        guard !pending.isEmpty else { return }
        // In key order, so that the blocks are written in order.
        let words = pending.map { (word: Array($0.key.utf8), list: $0.value) }.sorted {
            $0.word.lexicographicallyPrecedes($1.word)
        }
        for (word, list) in words { try appendBlocks(word, list.bytes) }
        pending = [:]
        pendingBytes = 0
    }

    /// Appends postings encoded with the first one's delta from 0 to `word`'s blocks.
    private func appendBlocks(_ word: [UInt8], _ encoded: [UInt8]) throws {
        let prefix = LMDBFullText.blockPrefix(word)
        // The word's last block: the entry before the first key past every key of the word.
        var after = prefix
        after[after.count - 1] = 1
        var current: (key: [UInt8], value: [UInt8], last: Int)?
        try withCursor { cursor in
            var key = MDB_val()
            var data = MDB_val()
            var rc = after.withUnsafeBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
            rc = mdb_cursor_get(cursor, &key, &data, LMDBResultCode(rc) == .success ? MDB_PREV : MDB_LAST)
            guard LMDBResultCode(rc) == .success else { return }
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            guard keyBytes.count == prefix.count + 8, keyBytes.starts(with: prefix), data.mv_size >= 8 else { return }
            let value = UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
            current = (Array(keyBytes), Array(value), LMDBFullText.readBigEndian(value, at: 0))
        }
        func write(_ block: (key: [UInt8], value: [UInt8], last: Int)) throws {
            var value = block.value
            var last: [UInt8] = []
            LMDBFullText.appendBigEndian(block.last, to: &last)
            value.replaceSubrange(0..<8, with: last)
            try transaction.put(dbi, key: block.key, value: value, collection: collection)
        }
        try encoded.withUnsafeBytes { bytes in
            var offset = 0
            var document = 0
            while offset < bytes.count {
                document += LMDBFullText.read(bytes, &offset)
                let start = offset
                _ = LMDBFullText.read(bytes, &offset)
                let hits = LMDBFullText.read(bytes, &offset)
                for _ in 0..<(hits * 2) { _ = LMDBFullText.read(bytes, &offset) }
                if var block = current, block.value.count < LMDBFullText.blockBound {
                    LMDBRecordCoding.appendVarint(UInt64(document - block.last), to: &block.value)
                    block.value += bytes[start..<offset]
                    block.last = document
                    current = block
                } else {
                    if let block = current { try write(block) }
                    var key = prefix
                    LMDBFullText.appendBigEndian(document, to: &key)
                    var value = [UInt8](repeating: 0, count: 8)
                    value.append(0)
                    value += bytes[start..<offset]
                    current = (key, value, document)
                }
            }
        }
        if let block = current { try write(block) }
    }
}

/// The postings of one word not yet in blocks (`LMDBFullTextWriter`): encoded as in a block,
/// the first one's delta from 0. A class, so that appending does not copy the bytes.
final class LMDBFullTextPending {
    /// The last document number appended.
    var last = 0
    var bytes: [UInt8] = []
}
