import Foundation
import Testing

@testable import Storage

/// The compact key list of bulk writes gives observers the same keys, in the same order, as the
/// array it replaced.
@Suite struct KeyListTests {
    static func list(_ keys: [StorageValue]) -> KeyList {
        var list = KeyList()
        for key in keys { list.append(key) }
        return list
    }

    @Test func keysComeBackAsTheyWereAppended() {
        let cases: [[StorageValue]] = [
            [],
            [.integer(1)],
            (1...1_000).map { .integer($0) },
            [.integer(5), .integer(6), .integer(8), .integer(9), .integer(10), .integer(3), .text("x"), .integer(4)],
            [.integer(Int64.max - 1), .integer(Int64.max), .integer(Int64.min), .integer(Int64.min + 1)],
            [.integer(2), .integer(2), .integer(3), .real(4), .integer(5), .null, .blob(Data([1]))],
        ]
        for keys in cases {
            let list = Self.list(keys)
            #expect(list.values == keys)
            #expect(list.count == keys.count)
        }
    }

    @Test func aChangeOfAListIsTheChangeOfItsKeys() {
        let keys: [StorageValue] = [.integer(1), .integer(2), .integer(3), .integer(2), .integer(7), .text("a")]
        var fromList = ChangeLog(collection: "c")
        fromList.record(.upsertList(Self.list(keys)))
        fromList.record(.delete([.integer(3)]))
        var fromArray = ChangeLog(collection: "c")
        fromArray.record(.upsert(keys))
        fromArray.record(.delete([.integer(3)]))
        #expect(fromList.change() == fromArray.change())
        #expect(fromList.change().upserted == [.integer(1), .integer(2), .integer(7), .text("a")])
        // One run of sequential keys: the fast path, the same answer.
        var sequential = ChangeLog(collection: "c")
        sequential.record(.upsertList(Self.list((1...500).map { .integer($0) })))
        #expect(sequential.change().upserted == (1...500).map { .integer($0) })
        // Runs that overlap repeat keys: counted once.
        var overlapping = ChangeLog(collection: "c")
        overlapping.record(.upsertList(Self.list([1, 2, 3, 2, 3, 4].map { .integer($0) })))
        #expect(overlapping.change().upserted == [1, 2, 3, 4].map { .integer($0) })
    }
}
