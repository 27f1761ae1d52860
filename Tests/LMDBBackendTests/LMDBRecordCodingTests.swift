import Foundation
import Storage
import Testing

@testable import LMDBBackend

/// `writeField` (the record writer's raw-memory path) must write exactly the bytes `appendField`
/// appends, and never more than `maximumFieldSize` promises.
@Test(arguments: [0, 1, 127, 128, 300, 20_000])
func aFieldWrittenToRawMemoryMatchesTheAppendedOne(field: Int) {
    let values: [StorageValue] = [
        .null, .integer(0), .integer(-1), .integer(63), .integer(-64), .integer(1 << 40), .integer(.max),
        .integer(.min), .real(0), .real(-2.5), .real(.infinity), .real(.nan), .text(""), .text("abc"),
        .text("ünïcødé ✓ 🚀"), .text(String(repeating: "x", count: 200)), .blob(Data()),
        .blob(Data([0, 1, 255])), .blob(Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })),
    ]
    for value in values {
        var appended: [UInt8] = []
        LMDBRecordCoding.appendField(field, value, to: &appended)
        let maximum = LMDBRecordCoding.maximumFieldSize(value)
        let written = [UInt8](unsafeUninitializedCapacity: maximum + 1) { out, count in
            count = LMDBRecordCoding.writeField(field, value, to: UnsafeMutableRawPointer(out.baseAddress!))
        }
        #expect(written == appended, "field \(field), value \(value)")
        #expect(written.count <= maximum, "field \(field), value \(value)")
    }
}
