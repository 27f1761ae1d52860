import Foundation

/// The one-pass computation of an aggregate request over the rows of a `scan`: the reference
/// every engine's own `GROUP BY` must match, and the way aggregates are computed on engines that
/// have none (LMDB, the file archive, memory, backends of other packages).
///
/// Each row is read once; groups are found by hashing their values as ``StorageKey``s (numbers as
/// numbers, text by its bytes, as SQL groups them), and sorted once at the end.
struct AggregateComputation {
    /// One aggregate's running state in one group.
    private struct Cell {
        var count = 0
        var sum = ExactSum()
        var extreme: StorageValue?
        var distinct: Set<StorageKey>?
    }

    /// A group's value as a dictionary key: equal as ``StorageKey``s are, with text compared byte
    /// by byte without going through `StorageValue.compare` (the hot path of a grouped scan).
    private struct GroupKey: Hashable {
        let value: StorageValue

        static func == (lhs: GroupKey, rhs: GroupKey) -> Bool {
            switch (lhs.value, rhs.value) {
            case (.text(let a), .text(let b)): return sameBytes(a, b)
            case (.integer(let a), .integer(let b)): return a == b
            default: return StorageKey(lhs.value) == StorageKey(rhs.value)
            }
        }

        func hash(into hasher: inout Hasher) {
            StorageKey(value).hash(into: &hasher)
        }

        /// Whether two texts have the same UTF-8 bytes: `memcmp` over their storage, where a
        /// byte-by-byte walk of their UTF-8 views was the grouped scan's largest cost.
        private static func sameBytes(_ a: String, _ b: String) -> Bool {
            guard a.utf8.count == b.utf8.count else { return false }
            let same = a.utf8.withContiguousStorageIfAvailable { left in
                b.utf8.withContiguousStorageIfAvailable { right in
                    left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
                }
            }
            return (same ?? nil) ?? a.utf8.elementsEqual(b.utf8)
        }
    }

    private let collection: String
    private let aggregates: [Aggregate]
    /// Each aggregate's function, read once a row without copying the aggregate.
    private let functions: [Aggregate.Function]
    /// The position in the scan's columns of each group column.
    private let groupPositions: [Int]
    /// For each group column, the keys (`NestedField.keys(of:)`) of the field inside its JSON
    /// text that is grouped by, or `nil` for the column itself; empty when no group is a field.
    private let groupKeys: [[[UInt8]]?]
    /// The position in the scan's columns of each aggregate's column (`nil` for `count`).
    private let positions: [Int?]
    /// The stored type of each scan column: values read get its affinity, as SQL sees them.
    private let types: [ColumnType]
    private var groupBySingle: [GroupKey: Int] = [:]
    /// The groups of a single group column whose value is text, found by their bytes
    /// (`TextGroups`) before `groupBySingle`, which holds them too.
    private var textGroups = TextGroups()
    /// Whether `textGroups` is in use: off after an insert probed too far.
    private var usesTextGroups = true
    private var groupByMany: [[GroupKey]: Int] = [:]
    private var groupValues: [[StorageValue]] = []
    /// Every group's cells, one run of `aggregates.count` per group.
    private var cells: [Cell] = []

    /// - Parameters:
    ///   - request: the aggregates, with column names as stored.
    ///   - columns: the columns the scan reads, each group column and aggregate column among them.
    ///   - types: the stored type of each of `columns`.
    init(_ request: AggregateRequest, columns: [String], types: [ColumnType]) {
        collection = request.collection
        aggregates = request.aggregates
        functions = request.aggregates.map(\.function)
        groupPositions = request.groupBy.map { columns.firstIndex(of: $0)! }
        groupKeys =
            request.groupsByNestedFields
            ? request.groupPaths.map { $0.isEmpty ? nil : NestedField.keys(of: $0) } : []
        positions = request.aggregates.map { aggregate in aggregate.column.map { columns.firstIndex(of: $0)! } }
        self.types = types
        if request.groupBy.isEmpty {
            // Exactly one row without groups, also over no records.
            groupValues = [[]]
            cells = Array(repeating: Cell(), count: aggregates.count)
        }
    }

    /// The value at `position`, with its column's affinity.
    @inline(__always)
    private func value(_ row: any StorageRow, at position: Int) -> StorageValue {
        // Text in a text column, the usual group, read without a value to convert.
        if types[position] == .text, let text = row.text(at: position) { return .text(text) }
        return row.value(at: position).applyingAffinity(types[position])
    }

    /// The value of the group column at `index` of `groupPositions`: the column's value, or the
    /// field inside its JSON text that is grouped by.
    @inline(__always)
    private func groupValue(_ row: any StorageRow, _ index: Int) -> StorageValue {
        let value = value(row, at: groupPositions[index])
        guard !groupKeys.isEmpty, let keys = groupKeys[index] else { return value }
        return NestedField.value(in: value, keys: keys)
    }

    /// The index of the group of `row`, made when it is the group's first record.
    private mutating func group(of row: any StorageRow) -> Int {
        switch groupPositions.count {
        case 0:
            return 0
        case 1:
            // A text group found by the bytes the row holds, without making a `String`: the
            // hot path of a grouped scan (a `String` is made for a new group only).
            if usesTextGroups, groupKeys.isEmpty, types[groupPositions[0]] == .text,
                let found = row.withText(at: groupPositions[0], { textGroups.group(ofBytes: $0) }),
                let group = found
            {
                return group
            }
            let value = groupValue(row, 0)
            if case .text(let text) = value, usesTextGroups {
                if let group = textGroups.group(of: text) { return group }
                if !textGroups.insert(text, group: groupValues.count) { usesTextGroups = false }
            } else if let group = groupBySingle[GroupKey(value: value)] {
                return group
            }
            groupBySingle[GroupKey(value: value)] = groupValues.count
            return newGroup([value])
        default:
            let values = groupPositions.indices.map { groupValue(row, $0) }
            let key = values.map { GroupKey(value: $0) }
            if let group = groupByMany[key] { return group }
            groupByMany[key] = groupValues.count
            return newGroup(values)
        }
    }

    private mutating func newGroup(_ values: [StorageValue]) -> Int {
        groupValues.append(values)
        cells.append(contentsOf: repeatElement(Cell(), count: aggregates.count))
        return groupValues.count - 1
    }

    /// Adds one record.
    /// - Throws: ``StorageError`` with `.invalidQuery` for a sum or average that meets a value
    ///   that is not a number.
    mutating func add(_ row: any StorageRow) throws {
        let base = group(of: row) * functions.count
        for index in functions.indices {
            let cell = base + index
            guard let position = positions[index] else {
                cells[cell].count += 1
                continue
            }
            let function = functions[index]
            if function == .sum || function == .average, types[position] == .integer,
                let number = row.integer(at: position)
            {
                // The common case read without making a value.
                cells[cell].count += 1
                cells[cell].sum.add(number)
                continue
            }
            let value = value(row, at: position)
            if value.isNull { continue }
            cells[cell].count += 1
            switch function {
            case .countDistinct:
                if cells[cell].distinct == nil { cells[cell].distinct = [] }
                cells[cell].distinct!.insert(StorageKey(value))
            case .sum, .average:
                switch value {
                case .integer(let number): cells[cell].sum.add(number)
                case .real(let number): cells[cell].sum.add(number)
                default: throw notANumber(aggregates[index], value)
                }
            case .minimum:
                if let extreme = cells[cell].extreme, StorageValue.compare(value, extreme) >= 0 { continue }
                cells[cell].extreme = value
            case .maximum:
                if let extreme = cells[cell].extreme, StorageValue.compare(value, extreme) <= 0 { continue }
                cells[cell].extreme = value
            default:
                break
            }
        }
    }

    private func notANumber(_ aggregate: Aggregate, _ value: StorageValue) -> StorageError {
        let kind = value.columnType.map { "\($0)" } ?? "null"
        return StorageError(
            .invalidQuery,
            "\(aggregate.name) adds numbers, but column \(Identifier.quoted(aggregate.column ?? "")) holds a \(kind) value",
            collection: collection,
            column: aggregate.column
        )
    }

    /// The rows: each group's values then its aggregates', groups ascending by their values
    /// (nulls first, as `orderBy` sorts).
    /// - Throws: ``StorageError`` with `.valueOutOfRange` for an integer sum beyond `Int64`.
    func rows() throws -> [[StorageValue]] {
        let order = groupValues.indices.sorted { lhs, rhs in
            for (left, right) in zip(groupValues[lhs], groupValues[rhs]) {
                let order = StorageValue.compare(left, right)
                if order != 0 { return order < 0 }
            }
            return false
        }
        return try order.map { group in
            var row = groupValues[group]
            row.reserveCapacity(row.count + aggregates.count)
            for (index, aggregate) in aggregates.enumerated() {
                row.append(try Self.result(aggregate, cells[group * aggregates.count + index], collection: collection))
            }
            return row
        }
    }

    private static func result(_ aggregate: Aggregate, _ cell: Cell, collection: String) throws -> StorageValue {
        switch aggregate.function {
        case .count:
            return .integer(Int64(cell.count))
        case .countDistinct:
            return .integer(Int64(cell.distinct?.count ?? 0))
        case .sum, .average:
            guard cell.count > 0, let column = aggregate.column else { return .null }
            do {
                return aggregate.function == .sum
                    ? try cell.sum.value(column: column) : try cell.sum.average(count: cell.count, column: column)
            } catch let error as StorageError {
                throw error.inCollection(collection)
            }
        case .minimum, .maximum:
            return cell.extreme ?? .null
        }
    }
}

/// The groups of text values, found by their UTF-8 bytes in an open-addressed table with a cheap
/// hash (FNV-1a from a random start, mixed): a grouped scan's look-up, where the dictionary by
/// `GroupKey` hashed every record's text with a freshly seeded SipHash. Group values come from
/// stored data, so a run of colliding texts is bounded: an insert that probes more than
/// `maximumProbe` slots answers `false`, and the computation goes on with the dictionary alone.
struct TextGroups {
    private static let maximumProbe = 64
    /// For each slot, its group's index plus one; 0 for an empty slot.
    private var slots: [Int] = Array(repeating: 0, count: 64)
    /// The UTF-8 bytes of every inserted text, one after the other.
    private var bytes: [UInt8] = []
    /// Where each group's text is in `bytes`, by the group's index (`count` -1 for groups of
    /// other values).
    private var texts: [(start: Int, count: Int)] = []
    private var count = 0
    private let seed = UInt64.random(in: 0...UInt64.max)

    private func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        return hash ^ (hash >> 33)
    }

    /// The group whose text has `text`'s bytes, if one was inserted.
    func group(of text: String) -> Int? {
        var text = text
        return text.withUTF8 { group(ofBytes: UnsafeRawBufferPointer($0)) }
    }

    /// The group whose text has exactly these UTF-8 bytes, if one was inserted. Bytes that are
    /// not valid UTF-8 equal no inserted text (each is a `String`'s bytes), so they miss here and
    /// are grouped by the `String` they decode to.
    func group(ofBytes text: UnsafeRawBufferPointer) -> Int? {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash(text)) & mask
        return bytes.withUnsafeBytes { stored in
            while true {
                let entry = slots[slot]
                if entry == 0 { return nil }
                let (start, count) = texts[entry - 1]
                if count == text.count
                    && (count == 0 || memcmp(stored.baseAddress! + start, text.baseAddress!, count) == 0)
                {
                    return entry - 1
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Records `text` as the value of group `group` (not yet in the table).
    /// - Returns: `false` when the insert probed too far: the table is then not to be used.
    mutating func insert(_ text: String, group: Int) -> Bool {
        if (count + 1) * 2 > slots.count { grow() }
        if texts.count <= group {
            texts.append(contentsOf: repeatElement((start: 0, count: -1), count: group + 1 - texts.count))
        }
        texts[group] = (start: bytes.count, count: text.utf8.count)
        bytes.append(contentsOf: text.utf8)
        count += 1
        return place(group, hashOfGroup(group))
    }

    private func hashOfGroup(_ group: Int) -> UInt64 {
        let (start, count) = texts[group]
        return bytes.withUnsafeBytes { hash(UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
    }

    private mutating func place(_ group: Int, _ hash: UInt64) -> Bool {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        var probes = 0
        while slots[slot] != 0 {
            slot = (slot + 1) & mask
            probes += 1
        }
        slots[slot] = group + 1
        return probes <= Self.maximumProbe
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        for entry in old where entry != 0 {
            _ = place(entry - 1, hashOfGroup(entry - 1))
        }
    }
}
