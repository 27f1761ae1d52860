import Foundation
import Storage
import Testing

/// A record with a property of every type the row encoder maps.
struct TypedRecord: Codable, Equatable, StorableModel {
    enum Mood: String, Codable { case happy, sad, calm }
    enum Level: Int, Codable {
        case low = 1
        case middle = 2
        case high = 3
    }

    static let collectionName = "typed_records"
    var id: Int64
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int: Int
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var float: Float
    var double: Double
    var decimal: Decimal
    var url: URL
    var uuid: UUID
    var date: Date
    var data: Data
    var flag: Bool
    var mood: Mood
    var level: Level

    static let all: [TypedRecord] = (1...12).map { number in
        let n = Int64(number)
        return TypedRecord(
            id: n,
            int8: Int8(n * 10 - 60),
            int16: Int16(n * -1_000),
            int32: Int32(n * 100_000),
            int: Int(n) * 7,
            uint: UInt(n) * 3,
            uint8: UInt8(n * 20),
            uint16: UInt16(n * 5_000),
            uint32: UInt32(n) * 300_000_000,
            uint64: UInt64(n) * 700_000_000_000_000_000,
            float: Float(n) / 3,
            double: Double(n) / 7,
            decimal: Decimal(n) / 100,
            url: URL(string: "https://example.org/\(n)?q=\(n % 3)")!,
            uuid: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!,
            date: Date(timeIntervalSince1970: Double(n) * 1_000.125),
            data: Data([UInt8(n), 0, 255, UInt8(n % 4)]),
            flag: n % 3 == 0,
            mood: [.happy, .sad, .calm][number % 3],
            level: [.low, .middle, .high][number % 3]
        )
    }
}

extension ConformanceSuite {
    /// Comparisons with a value of every mapped type select what the stored values hold.
    static let typedComparisonChecks: [ConformanceCheck] = [
        check("comparisons with every mapped type match the stored values") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: TypedRecord.all)
            let all = TypedRecord.all
            func ids(_ predicate: StoragePredicate) throws -> [Int64] {
                try store.fetchAll(TypedRecord.self, where: predicate).map(\.id)
            }
            func expected(_ oracle: (TypedRecord) -> Bool) -> [Int64] { all.filter(oracle).map(\.id) }
            func equatable<Value: StorageValueConvertible & Equatable>(
                _ column: String,
                _ property: KeyPath<TypedRecord, Value>,
                sourceLocation: SourceLocation = #_sourceLocation
            ) throws {
                let (one, other) = (all[4][keyPath: property], all[7][keyPath: property])
                #expect(
                    try ids(Column(column) == one) == expected { $0[keyPath: property] == one },
                    "\(column) ==",
                    sourceLocation: sourceLocation
                )
                #expect(
                    try ids(Column(column) != one) == expected { $0[keyPath: property] != one },
                    "\(column) !=",
                    sourceLocation: sourceLocation
                )
                #expect(
                    try ids(Column(column).in([one, other]))
                        == expected { [one, other].contains($0[keyPath: property]) },
                    "\(column) in",
                    sourceLocation: sourceLocation
                )
            }
            func comparable<Value: StorageValueConvertible & Comparable>(
                _ column: String,
                _ property: KeyPath<TypedRecord, Value>,
                sourceLocation: SourceLocation = #_sourceLocation
            ) throws {
                try equatable(column, property, sourceLocation: sourceLocation)
                let pivot = all[5][keyPath: property]
                #expect(
                    try ids(Column(column) < pivot) == expected { $0[keyPath: property] < pivot },
                    "\(column) <",
                    sourceLocation: sourceLocation
                )
                #expect(
                    try ids(Column(column) >= pivot) == expected { $0[keyPath: property] >= pivot },
                    "\(column) >=",
                    sourceLocation: sourceLocation
                )
            }
            try comparable("int8", \.int8)
            try comparable("int16", \.int16)
            try comparable("int32", \.int32)
            try comparable("int", \.int)
            try comparable("uint", \.uint)
            try comparable("uint8", \.uint8)
            try comparable("uint16", \.uint16)
            try comparable("uint32", \.uint32)
            try comparable("uint64", \.uint64)
            try comparable("float", \.float)
            try comparable("double", \.double)
            try comparable("date", \.date)
            try equatable("decimal", \.decimal)
            try equatable("url", \.url)
            try equatable("uuid", \.uuid)
            try equatable("data", \.data)
            try equatable("flag", \.flag)
            // Beyond Int64: no stored integer reaches it, and it still orders above every one.
            #expect(try ids(Column("uint64") < UInt64.max) == all.map(\.id))
            #expect(try ids(Column("uint64") == UInt64.max).isEmpty)
            // Raw-value enums compare by their raw value, as Codable stores them.
            #expect(try ids(Column("mood") == TypedRecord.Mood.calm) == expected { $0.mood == .calm })
            #expect(try ids(Column("mood") != TypedRecord.Mood.calm) == expected { $0.mood != .calm })
            #expect(
                try ids(Column("mood").in([TypedRecord.Mood.happy, .sad])) == expected { $0.mood != .calm }
            )
            #expect(try ids(Column("level") >= TypedRecord.Level.middle) == expected { $0.level != .low })
            #expect(try ids(Column("level") < TypedRecord.Level.middle) == expected { $0.level == .low })
            #expect(try ids(!Column("level").in([TypedRecord.Level.high])) == expected { $0.level != .high })
        }
    ]
}
