import Foundation
import Storage

/// A record file: a keyed archive of column name → value, with null values left out (a missing
/// key reads as null, so columns added later need no rewrite).
enum RecordArchive {
    /// The record file's bytes; `nil` when it would be larger than `maximumSize`.
    static func encode(
        _ record: [StorageValue],
        columns: [ColumnDefinition],
        maximumSize: Int = ArchiveLayout.maximumSize
    ) -> [UInt8]? {
        var writer = ArchiveWriter(kind: .record, capacity: 64 + record.count * 16, maximumSize: maximumSize)
        let container = writer.beginContainer(.keyed)
        for (index, value) in record.enumerated() where !value.isNull {
            writer.appendKey(columns[index].name)
            writer.incrementCount(ofContainerAt: container)
            switch value {
            case .null: writer.append(.null)
            case .integer(let number): writer.appendInt(number)
            case .real(let number): writer.appendDouble(number)
            case .text(let text): writer.appendText(.string, text)
            case .blob(let data): writer.appendData(data)
            }
        }
        writer.endContainer(at: container)
        return writer.finish()
    }

    /// The size of the file `encode` writes for `record`, computed without writing it: a record is
    /// checked against the limit when it is put, before the transaction changes anything.
    static func encodedSize(_ record: [StorageValue], columns: [ColumnDefinition]) -> Int {
        func varint(_ value: Int) -> Int {
            var size = 1
            var rest = UInt64(value) >> 7
            while rest != 0 {
                size += 1
                rest >>= 7
            }
            return size
        }
        func run(_ count: Int) -> Int { varint(count) + count }
        var size = ArchiveLayout.headerSize + ArchiveLayout.containerHeaderSize + ArchiveLayout.trailerSize
        for (index, value) in record.enumerated() where !value.isNull {
            size += run(columns[index].name.utf8.count) + 1
            switch value {
            case .null: break
            case .integer, .real: size += 8
            case .text(let text): size += run(text.utf8.count)
            case .blob(let data): size += run(data.count)
            }
        }
        return size
    }

    /// Refuses a record whose file would pass the archive's size limit, which the reader enforces.
    /// - Throws: `StorageError` with code `.limitExceeded` naming the limit, the collection and the key.
    static func checkSize(
        _ record: [StorageValue],
        columns: [ColumnDefinition],
        collection: String,
        key: StorageValue,
        maximumSize: Int = ArchiveLayout.maximumSize
    ) throws {
        let size = encodedSize(record, columns: columns)
        guard size > maximumSize else { return }
        throw StorageError(
            .limitExceeded,
            "the record's file would be \(size) bytes, more than the \(maximumSize) bytes (2 GiB) an archive"
                + " file may be; nothing was written",
            collection: collection,
            key: key
        )
    }

    /// The record's values in the order of `columns`; names the schema lacks are ignored.
    static func decode(
        _ bytes: [UInt8],
        path: String?,
        positions: [String: Int],
        columnCount: Int,
        verifyingChecksum: Bool = true
    ) throws -> [StorageValue] {
        let reader = try ArchiveReader(bytes: bytes, path: path, kind: .record, verifyingChecksum: verifyingChecksum)
        var record = [StorageValue](repeating: .null, count: columnCount)
        for entry in try reader.keyedEntries(at: reader.rootOffset) {
            let name = try reader.string(in: entry.key, at: entry.key.lowerBound)
            let value = try storageValue(reader, at: entry.value)
            if let position = positions[name] { record[position] = value }
        }
        return record
    }

    static func storageValue(_ reader: ArchiveReader, at offset: Int) throws -> StorageValue {
        switch try reader.tag(at: offset) {
        case .null: return .null
        case .int: return .integer(try reader.fixed(Int64.self, at: offset + 1))
        case .double: return .real(Double(bitPattern: try reader.fixed(UInt64.self, at: offset + 1)))
        case .string: return .text(try reader.string(in: try reader.run(at: offset + 1), at: offset))
        case .data: return .blob(Data(reader.bytes[try reader.run(at: offset + 1)]))
        case let tag: throw reader.corrupt("a record holds a value of tag \(tag)", at: offset)
        }
    }
}

/// A collection's `schema` file, written with `ArchiveEncoder`.
struct SchemaArchive: Codable, Equatable {
    struct Column: Codable, Equatable {
        var name: String
        var type: String
        var isNullable: Bool
    }

    struct Index: Codable, Equatable {
        var columns: [String]
        var isUnique: Bool
    }

    var name: String
    var primaryKey: String
    var columns: [Column]
    var indexes: [Index]
    /// The highest key assigned or seen in a collection with auto-assigned keys.
    var lastAssignedKey: Int64

    init(_ schema: CollectionSchema, lastAssignedKey: Int64) {
        name = schema.name
        primaryKey = schema.primaryKey
        columns = schema.columns.map { Column(name: $0.name, type: $0.type.rawValue, isNullable: $0.isNullable) }
        indexes = schema.indexes.map { Index(columns: $0.columns, isUnique: $0.isUnique) }
        self.lastAssignedKey = lastAssignedKey
    }

    func schema(path: String) throws -> CollectionSchema {
        let columns = try self.columns.map { column in
            guard let type = ColumnType(rawValue: column.type) else {
                throw StorageError(.corrupt, "unknown column type '\(column.type)' in \(path)", path: path)
            }
            return ColumnDefinition(name: column.name, type: type, isNullable: column.isNullable)
        }
        let schema = CollectionSchema(
            name: name,
            columns: columns,
            primaryKey: primaryKey,
            indexes: indexes.map { IndexDefinition($0.columns, unique: $0.isUnique) }
        )
        do {
            // The store's own collections (`_settings`) are stored like any other.
            try schema.validate(allowingReservedName: true)
        } catch let error as StorageError {
            throw StorageError(.corrupt, "invalid schema in \(path): \(error.message)", path: path, underlying: error)
        }
        return schema
    }
}

/// The journal of a commit: the renames and removals that make it, relative to the store folder.
struct JournalArchive: Codable, Equatable {
    struct Rename: Codable, Equatable {
        var from: String
        var to: String
    }

    var renames: [Rename]
    var removals: [String]
}
