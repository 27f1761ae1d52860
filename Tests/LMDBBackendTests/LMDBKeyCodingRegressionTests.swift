import Foundation
import Storage
import Testing

@testable import LMDBBackend

// Regressions found by the `records` fuzz target (docs/FUZZING.md).

private func keyOrder(_ lhs: StorageValue, _ rhs: StorageValue) -> Int {
    let keys = (LMDBKeyCoding.encode(lhs), LMDBKeyCoding.encode(rhs))
    return keys.0.withUnsafeBytes { a in keys.1.withUnsafeBytes { b in LMDBKeyCoding.compare(a, b) } }
}

/// A negative real above -0.5 used to be stored as -1 plus a fraction that rounds (to 1.0 for
/// tiny values), so different values had the same key: the fuzzer's pair, and a sweep.
@Test func negativeRealsAboveMinusOneHalfHaveKeysOfTheirOwn() {
    #expect(keyOrder(.real(-2.470176667735247e-82), .real(-4.778309726736481e-299)) == -1)
    let values: [Double] = [
        -1, -0.75, -0.5, -0.5.nextUp, -0.25, -1e-3, -1e-17, -1.1e-17, -1e-100, -.leastNonzeroMagnitude, -0.0, 0,
        .leastNonzeroMagnitude, 0.25, 1,
    ]
    for (index, lhs) in values.enumerated() {
        for rhs in values[index...] {
            let expected = StorageValue.compare(.real(lhs), .real(rhs)).signum()
            #expect(keyOrder(.real(lhs), .real(rhs)) == expected, "\(lhs) against \(rhs)")
            #expect(keyOrder(.real(rhs), .real(lhs)) == -expected, "\(rhs) against \(lhs)")
        }
        // And against the integers around them.
        for integer: Int64 in [-1, 0] {
            let expected = StorageValue.compare(.real(lhs), .integer(integer)).signum()
            #expect(keyOrder(.real(lhs), .integer(integer)) == expected, "\(lhs) against \(integer)")
        }
    }
}

private struct Reading: StorableModel, Equatable {
    static let collectionName = "readings"
    static let indexes = [IndexDefinition(["value"], unique: true)]
    var id: Int64
    var value: Double
}

/// The same, through a store: two tiny negative values in a unique index are not duplicates,
/// and an index range query tells them apart.
@Test func tinyNegativeRealsInAUniqueIndexAreDistinct() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        let readings = [Reading(id: 1, value: -1e-20), Reading(id: 2, value: -2e-20), Reading(id: 3, value: -0.75)]
        try store.save(contentsOf: readings)
        #expect(try store.fetchAll(Reading.self, orderBy: [.ascending("value")]).map(\.id) == [3, 2, 1])
        #expect(try store.fetchAll(Reading.self, where: Column("value") < -1.5e-20).map(\.id).sorted() == [2, 3])
        #expect(try store.fetchAll(Reading.self, where: Column("value") == -1e-20).map(\.id) == [1])
    }
}
