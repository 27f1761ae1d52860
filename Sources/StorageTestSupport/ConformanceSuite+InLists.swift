import Foundation
import Storage
import Testing

extension ConformanceSuite {
    /// IN lists of any length, with SQLite's NULL semantics, and `&&`/`||` chains built in a loop.
    static let inListChecks: [ConformanceCheck] = [
        check("IN and NOT IN select what SQLite selects, nulls included") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            func expect(
                _ label: String,
                _ predicate: StoragePredicate,
                _ oracle: (Member) -> Bool,
                sourceLocation: SourceLocation = #_sourceLocation
            ) throws {
                let expected = Member.all.filter(oracle).map(\.id)
                let found = try store.fetchAll(Member.self, where: predicate).map(\.id)
                #expect(found == expected, "\(label)", sourceLocation: sourceLocation)
                let count = try store.count(Member.self, where: predicate)
                #expect(count == expected.count, "\(label)", sourceLocation: sourceLocation)
            }
            let emails = ["m1@example.com", "m6@example.com", "nobody@example.com"]
            // email has a unique index, age a plain one, id is the key, name has none.
            try expect("email in", Column("email").in(emails)) { $0.email.map(emails.contains) ?? false }
            try expect("email not in skips null emails", !Column("email").in(emails)) {
                $0.email.map { !emails.contains($0) } ?? false
            }
            try expect("age in, with repeats", Column("age").in([22, 22, 29, 99])) { [22, 29].contains($0.age) }
            try expect("name in", Column("name").in(["Ann0", "bob1", "zed"])) { ["Ann0", "bob1"].contains($0.name) }
            try expect("id in, mixed storage classes", Column("id").in([StorageValue.integer(1), 2.0, "3", 4.5])) {
                $0.id <= 3
            }
            // A null in the list makes every miss unknown: IN selects only hits, NOT IN nothing.
            let scores: [Double?] = [0.25, 0.5, nil]
            try expect("score in with a null", Column("score").in(scores)) { [0.25, 0.5].contains($0.score) }
            try expect("score not in with a null selects nothing", !Column("score").in(scores)) { _ in false }
            try expect("not in without a null skips null scores", !Column("score").in([0.25, 0.5])) {
                $0.score.map { ![0.25, 0.5].contains($0) } ?? false
            }
            // An empty list is false even for a null, as in SQLite; NOT of it selects everything.
            try expect("in [] selects nothing", Column("score").in([Double]())) { _ in false }
            try expect("not in [] selects every record, nulls too", !Column("score").in([Double]())) { _ in true }
            try expect("in and a range", Column("id").in(1...20) && Column("age") > 40) { $0.id <= 20 && $0.age > 40 }
            try expect("in or in", Column("id").in([1, 2]) || Column("age").in([22])) {
                $0.id <= 2 || $0.age == 22
            }
            #expect(try store.deleteAll(Member.self, where: Column("id").in([2, 4, 1_000])) == 2)
            #expect(try store.count(Member.self) == Member.all.count - 2)
        },
        check("IN lists of a million values, on the key, an index and a plain column") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            let count = Member.all.count
            // The contract's two queries.
            #expect(try store.count(Member.self, where: Column("id").in([Int64](0..<200_000))) == count)
            #expect(try store.count(Member.self, where: !Column("id").in([1, 2, 3])) == count - 3)
            // A million values, on the key (IN and NOT IN), then shorter lists elsewhere.
            let million = [Int64](0..<1_000_000)
            #expect(try store.count(Member.self, where: Column("id").in(million)) == count)
            let evens = stride(from: Int64(0), to: 2_000_000, by: 2)
            let odd = Member.all.filter { $0.id % 2 == 1 }.map(\.id)
            #expect(try store.fetchAll(Member.self, where: !Column("id").in(evens)).map(\.id) == odd)
            // With a null, a miss is unknown: NOT IN selects nothing, however long the list.
            let withNull = (20..<100_000).map { StorageValue.integer($0) } + [.null]
            #expect(try store.count(Member.self, where: !Column("id").in(withNull)) == 0)
            #expect(try store.count(Member.self, where: Column("id").in(withNull)) == count - 19)
            let ages = [Int](100..<100_100) + [22]
            #expect(
                try store.fetchAll(Member.self, where: Column("age").in(ages)).map(\.id)
                    == Member.all.filter { $0.age == 22 }.map(\.id)
            )
            // Text that JSON must escape, and text with a NUL, among many others.
            let names = (0..<100_000).map { "n\($0)\"\\\n" } + ["Ann0", "x\0y"]
            #expect(
                try store.fetchAll(Member.self, where: Column("name").in(names), orderBy: [.descending("id")])
                    .map(\.id) == Member.all.filter { $0.name == "Ann0" }.map(\.id).reversed()
            )
            let someEvens = stride(from: Int64(0), to: 200_000, by: 2)
            #expect(try store.deleteAll(Member.self, where: Column("id").in(someEvens)) == count - odd.count)
            #expect(try store.fetchAll(Member.self).map(\.id) == odd)
        },
        check("&& and || chains of 10,000 terms built in a loop") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            var anyOf = Column("id") == -1
            for value in 0..<10_000 { anyOf = anyOf || Column("id") == Int64(value * 2) }
            var allOf = Column("age") != -1
            for value in 0..<10_000 { allOf = allOf && Column("age") != 1_000 + value }
            let even = Member.all.filter { $0.id % 2 == 0 }
            #expect(try store.fetchAll(Member.self, where: anyOf).map(\.id) == even.map(\.id))
            #expect(try store.count(Member.self, where: allOf) == Member.all.count)
            #expect(try store.count(Member.self, where: anyOf && allOf && !anyOf) == 0)
            // Beyond what one SQLite statement binds (32,766 values): filtered outside the engine.
            var longer = anyOf
            for value in 10_000..<40_000 { longer = longer || Column("name") == "none\(value)" }
            let oldest = even.sorted { ($0.age, $1.id) > ($1.age, $0.id) }.prefix(3).map(\.id)
            #expect(
                try store.fetchAll(Member.self, where: longer, orderBy: [.descending("age")], limit: 3).map(\.id)
                    == Array(oldest)
            )
            #expect(try store.count(Member.self, where: longer) == even.count)
            #expect(try store.deleteAll(Member.self, where: longer) == even.count)
            #expect(try store.count(Member.self) == Member.all.count - even.count)
        },
    ]
}
