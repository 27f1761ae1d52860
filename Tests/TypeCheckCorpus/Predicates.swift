// Query predicates as a user writes them: `&&` and `||` mixing comparisons with a value of every
// `StorageValueConvertible` type (each integer width, Float, Double, Bool, String, Substring,
// Date, Data, UUID, URL, Decimal, optionals), raw-value enums and a `ColumnCodable` type, with
// literals and with variables, in a synchronous function and in an async one.
import Foundation
import Storage

enum Level: String, Codable, Sendable { case low, middle, high }
enum Rank: Int, Codable, Sendable {
    case first = 1
    case second
    case third
}

/// A type that chooses its stored form (`ColumnCodable`).
struct Celsius: Codable, Sendable, ColumnCodable {
    var degrees: Double
    static var columnType: ColumnType { .real }
    var storageValue: StorageValue { .real(degrees) }
    init(degrees: Double) { self.degrees = degrees }
    init(storageValue: StorageValue) throws {
        guard case .real(let degrees) = storageValue else { throw StorageError(.typeMismatch, "not a temperature") }
        self.degrees = degrees
    }
}

struct Reading: Codable, Sendable {
    var id: UUID
    var station: String
    var taken: Date
    var level: Level
    var rank: Rank
    var temperature: Celsius
    var count: Int
    var total: Int64
    var small: Int8
    var medium: Int16
    var large: Int32
    var unsigned: UInt
    var byte: UInt8
    var word: UInt16
    var double: UInt32
    var quad: UInt64
    var ratio: Float
    var value: Double
    var valid: Bool
    var note: String?
    var payload: Data
    var link: URL?
    var amount: Decimal
    var rating: Int?
}

func literalPredicates(store: ObjectStore) throws {
    let a = try store.fetchAll(
        Reading.self,
        where: Column("count") > 3 && Column("value") <= 2.5 || Column("valid") == true
    )
    let b = try store.fetchAll(
        Reading.self,
        where: Column("station") == "north" && (Column("total") >= 1_000 || Column("small") < -3)
            && Column("note") != nil
    )
    let c = try store.count(
        Reading.self,
        where: Column("medium") >= 10 && Column("large") < 100_000 && Column("unsigned") > 1 || Column("byte") == 255
    )
    let d = try store.count(
        Reading.self,
        where: (Column("word") <= 9 || Column("double") >= 70_000) && Column("quad") != 0 && Column("ratio") < 0.5
    )
    let e = try store.fetchAll(
        Reading.self,
        where: Column("level") == Level.high || Column("rank") < Rank.third && Column("rating") == nil,
        orderBy: [.descending("taken")],
        limit: 10
    )
    let f = try store.deleteAll(
        Reading.self,
        where: Column("valid") == false && Column("value") > 1e6 || Column("count") == 0
    )
    print(a.count, b.count, c, d, e.count, f)
}

func variablePredicates(store: ObjectStore) throws {
    let id = UUID()
    let since = Date(timeIntervalSinceNow: -86_400)
    let until = Date()
    let station = "north"
    let prefix: Substring = "no"
    let minimum = 3
    let total: Int64 = 1_000
    let small: Int8 = -3
    let byte: UInt8 = 200
    let quad: UInt64 = 1 << 40
    let ratio: Float = 0.25
    let value = 2.5
    let valid = true
    let note: String? = nil
    let payload = Data([1, 2, 3])
    let link = URL(string: "https://example.org")
    let amount = Decimal(string: "12.50")!
    let rating: Int? = 4
    let level = Level.middle
    let warm = Celsius(degrees: 21.5)
    let a = try store.fetchAll(
        Reading.self,
        where: Column("id") == id || Column("taken") >= since && Column("taken") < until && Column("station") == station
    )
    let b = try store.fetchAll(
        Reading.self,
        where: Column("station") != prefix && Column("count") >= minimum && Column("total") < total
            || Column("small") == small
    )
    let c = try store.count(
        Reading.self,
        where: Column("byte") <= byte && Column("quad") > quad || Column("ratio") >= ratio && Column("value") != value
    )
    let d = try store.count(
        Reading.self,
        where: Column("valid") == valid && Column("note") == note
            || Column("payload") == payload && Column("link") == link
    )
    let e = try store.fetchAll(
        Reading.self,
        where: Column("amount") > amount && Column("rating") == rating
            || Column("level") != level
                && Column("temperature") >= warm,
        orderBy: [.ascending("station"), .descending("taken")],
        limit: 20,
        offset: 40
    )
    let f = try store.fetchAll(
        Reading.self,
        where: !(Column("note").like("A%") || Column("count").in([1, 2, 3])) && Column("level").in([Level.low, .high])
    )
    print(a.count, b.count, c, d, e.count, f.count)
}

func asyncPredicates(store: ObjectStore) async throws {
    let since = Date(timeIntervalSinceNow: -3_600)
    let minimum = 3
    let a = try await store.fetchAll(
        Reading.self,
        where: Column("count") > minimum && Column("value") <= 2.5 || Column("valid") == true && Column("taken") > since
    )
    let b = try await store.count(
        Reading.self,
        where: Column("station") == "north" && (Column("total") >= 1_000 || Column("small") < -3)
            && Column("note") != nil
    )
    let c = try await store.deleteAll(
        Reading.self,
        where: Column("level") == Level.low || Column("rank") >= Rank.second && Column("rating") == nil
    )
    var names: [String] = []
    for try await reading in store.stream(Reading.self, where: Column("byte") > 7 && Column("ratio") < 0.5) {
        names.append(reading.station)
    }
    print(a.count, b, c, names)
}

func nestedFieldPredicates(store: ObjectStore) async throws {
    let city = "Oslo"
    let minimum = 3
    let a = try await store.fetchAll(
        Reading.self,
        where: Column("address", "city") == "Oslo" && Column("address", "zip") >= 100
            || Column("address", "geo", "lat") < 59.5 && Column("count") > minimum,
        orderBy: [.ascending(Column("address", "city")), .descending("taken")]
    )
    let b = try await store.count(
        Reading.self,
        where: !(Column("address", "city") == nil) && Column("address", "city").like("O%")
            && Column("address", "zip").in([150, 151]) && Column("address", "verified") == true
    )
    let c = try await store.fetchAll(
        Reading.self,
        where: Column("address", "city") != city || Column("address", "level") == Level.low,
        orderBy: [.descending(Column("address", "geo", "lat")), .ascending("station")],
        limit: 10
    )
    print(a.count, b, c.count)
}
