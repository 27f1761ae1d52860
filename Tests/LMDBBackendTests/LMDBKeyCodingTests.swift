import Foundation
import Storage
import Testing

@testable import LMDBBackend

/// Values of every storage class, with the edge cases of the key encoding: integers at the
/// extremes, reals between and beyond them, text and blobs that are prefixes of each other or
/// hold zero bytes.
private let samples: [StorageValue] = [
    .null,
    .integer(.min), .integer(-1), .integer(0), .integer(1), .integer(3), .integer(.max),
    .real(-.infinity), .real(-1e300), .real(-9_223_372_036_854_775_808.0), .real(-1.5), .real(-0.5),
    .real(0.25), .real(2.999), .real(3.0), .real(3.5), .real(9_007_199_254_740_993.0),
    .real(9_223_372_036_854_775_808.0), .real(1e300), .real(.infinity),
    .text(""), .text("a"), .text("a\u{0}"), .text("a\u{0}b"), .text("ab"), .text("b"), .text("é"),
    .blob(Data()), .blob(Data([0])), .blob(Data([0, 0])), .blob(Data([0, 1])), .blob(Data([1])), .blob(Data([255])),
]

@Test func keyBytesSortLikeStorageValues() {
    for lhs in samples {
        for rhs in samples {
            let bytes = LMDBKeyCoding.encode(lhs).withUnsafeBytes { left in
                LMDBKeyCoding.encode(rhs).withUnsafeBytes { right in LMDBKeyCoding.compare(left, right) }
            }
            #expect(bytes == StorageValue.compare(lhs, rhs).signum(), "\(lhs) vs \(rhs)")
        }
    }
}

@Test func compositeKeysSortByTheirFirstComponentFirst() {
    // "a" followed by a key must sort before "ab" followed by any key: components end unambiguously.
    let short = LMDBKeyCoding.encode(.text("a")) + LMDBKeyCoding.encode(.integer(.max))
    let long = LMDBKeyCoding.encode(.text("ab")) + LMDBKeyCoding.encode(.integer(.min))
    #expect(short.lexicographicallyPrecedes(long))
}

@Test func componentsAreSkippedExactly() {
    var bytes: [UInt8] = []
    for value in samples { LMDBKeyCoding.append(value, to: &bytes) }
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        for value in samples {
            let next = LMDBKeyCoding.skipComponent(in: buffer, at: offset)
            #expect(next == offset + LMDBKeyCoding.encode(value).count, "\(value)")
            offset = next ?? buffer.count
        }
        #expect(offset == buffer.count)
    }
}

@Test func recordsRoundTripAndSkipUnknownFields() {
    let values: [StorageValue] = [
        .integer(.min), .integer(-1), .integer(.max), .real(-0.0), .real(.pi), .text(""), .text("héllo\u{0}"),
        .blob(Data()), .blob(Data(repeating: 7, count: 70_000)), .null,
    ]
    var bytes = [LMDBRecordCoding.formatVersion]
    for (field, value) in values.enumerated() { LMDBRecordCoding.appendField(field * 2, value, to: &bytes) }
    bytes.withUnsafeBytes { record in
        // A reader that knows fewer fields than the writer: the others are skipped.
        let narrow = LMDBRow(requested: [0, 2, 1], fieldCount: 3)
        #expect(narrow.load(record))
        #expect(narrow.value(at: 0) == values[0])
        #expect(narrow.value(at: 1) == values[1])
        #expect(narrow.value(at: 2) == .null)
        let wide = LMDBRow(requested: values.indices.map { $0 * 2 }, fieldCount: values.count * 2 + 5)
        #expect(wide.load(record))
        for index in values.indices { #expect(wide.value(at: index) == values[index]) }
        // Truncated bytes are refused, not read past their end.
        let truncated = UnsafeRawBufferPointer(rebasing: record[..<(record.count - 1)])
        #expect(!wide.load(truncated))
    }
}
