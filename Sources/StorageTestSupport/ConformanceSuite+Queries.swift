import Foundation
import Storage
import Testing

extension ConformanceSuite {
    /// Queries with an oracle written in plain Swift (SQL's three-valued logic spelled out), so
    /// every backend is checked against the same independent answer.
    static let queryCases: [(String, StoragePredicate, @Sendable (Member) -> Bool)] = [
        ("age >= 30", Column("age") >= 30, { $0.age >= 30 }),
        (
            "age < 30 && name like a%", Column("age") < 30 && Column("name").like("a%"),
            {
                $0.age < 30 && $0.name.lowercased().hasPrefix("a")
            }
        ),
        ("email == nil", Column("email") == nil, { $0.email == nil }),
        ("email != nil", Column("email") != nil, { $0.email != nil }),
        (
            "!(email == m1@…) skips nulls", !(Column("email") == "m1@example.com"),
            {
                $0.email != nil && $0.email != "m1@example.com"
            }
        ),
        (
            "score > 2.5 || age <= 20", Column("score") > 2.5 || Column("age") <= 20,
            {
                ($0.score ?? -1) > 2.5 || $0.age <= 20
            }
        ),
        ("!(score > 5) skips nulls", !(Column("score") > 5), { $0.score.map { $0 <= 5 } ?? false }),
        ("score == 2 (integer against real)", Column("score") == 2, { $0.score == 2 }),
        ("age > 40.5 (real against integer)", Column("age") > 40.5, { Double($0.age) > 40.5 }),
        ("age == \"33\" (numeric text against integer)", Column("age") == "33", { $0.age == 33 }),
        ("name like _o%", Column("name").like("_o%"), { Array($0.name.unicodeScalars).dropFirst().first == "o" }),
        ("name like %\\%%", Column("name").like("%\\%%"), { _ in false }),
        (
            "name like A%b%", Column("name").like("A%b%"),
            {
                let lower = $0.name.lowercased()
                return lower.hasPrefix("a") && lower.dropFirst().contains("b")
            }
        ),
        ("name like é% is case-sensitive beyond ASCII", Column("name").like("é%"), { $0.name.hasPrefix("é") }),
        ("age in [22, 29, 99]", Column("age").in([22, 29, 99]), { [22, 29, 99].contains($0.age) }),
        ("id != 3 && id <= 10", Column("id") != 3 && Column("id") <= 10, { $0.id != 3 && $0.id <= 10 }),
    ]

    static let queryChecks: [ConformanceCheck] = [
        check("predicates select what SQL's three-valued logic selects") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            for (label, predicate, oracle) in queryCases {
                let expected = Member.all.filter(oracle).map(\.id)
                #expect(try store.fetchAll(Member.self, where: predicate).map(\.id) == expected, "\(label)")
                #expect(try store.count(Member.self, where: predicate) == expected.count, "\(label)")
            }
        },
        check("ordering sorts nulls first, text byte-wise, ties by key, and limit cuts") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            func key(_ member: Member) -> (Int, Double, Int64) {
                (member.score == nil ? 0 : 1, member.score ?? 0, member.id)
            }
            let byScore = Member.all.sorted { key($0) < key($1) }.map(\.id)
            #expect(try store.fetchAll(Member.self, orderBy: [.ascending("score")]).map(\.id) == byScore)
            let byNameDescending = Member.all.sorted { lhs, rhs in
                lhs.name == rhs.name
                    ? lhs.id < rhs.id : Array(lhs.name.utf8).lexicographicallyPrecedes(Array(rhs.name.utf8)) == false
            }.map(\.id)
            #expect(try store.fetchAll(Member.self, orderBy: [.descending("name")]).map(\.id) == byNameDescending)
            let oldestFive = Member.all.sorted { ($0.age, $1.id) > ($1.age, $0.id) }.prefix(5).map(\.id)
            #expect(
                try store.fetchAll(Member.self, orderBy: [.descending("age")], limit: 5).map(\.id) == Array(oldestFive)
            )
            #expect(try store.fetchAll(Member.self, limit: 0).isEmpty)
            #expect(try store.fetchAll(Member.self).map(\.id) == Member.all.map(\.id))
        },
        check("several sort keys, then a limit") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            let expected = Member.all.sorted { lhs, rhs in
                if lhs.age != rhs.age { return lhs.age < rhs.age }
                if lhs.name != rhs.name { return Array(rhs.name.utf8).lexicographicallyPrecedes(Array(lhs.name.utf8)) }
                return lhs.id < rhs.id
            }.prefix(7).map(\.id)
            let found = try store.fetchAll(
                Member.self,
                where: Column("id") > 0,
                orderBy: [.ascending("age"), .descending("name")],
                limit: 7
            )
            #expect(found.map(\.id) == Array(expected))
        },
        check("forEach streams the matching records in order") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            var seen: [Int64] = []
            try store.forEach(Member.self, where: Column("age") > 40, orderBy: [.ascending("age")]) {
                seen.append($0.id)
            }
            let expected = Member.all.filter { $0.age > 40 }.sorted { ($0.age, $0.id) < ($1.age, $1.id) }.map(\.id)
            #expect(seen == expected)
        },
        check("an error thrown from forEach's body stops the stream and is rethrown") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            var seen = 0
            do {
                try store.forEach(Member.self) { _ in
                    seen += 1
                    if seen == 3 { throw AbortTransaction(reason: "enough") }
                }
                Issue.record("forEach did not rethrow")
            } catch let error as AbortTransaction {
                #expect(error.reason == "enough")
            }
            #expect(seen == 3)
            #expect(try store.count(Member.self) == Member.all.count)
        },
        check("delete and deleteAll remove exactly the matching records") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            #expect(try store.delete(Member.self, id: 1))
            #expect(try store.fetch(Member.self, id: 1) == nil)
            let young = Member.all.filter { $0.age < 25 && $0.id != 1 }.count
            #expect(try store.deleteAll(Member.self, where: Column("age") < 25) == young)
            #expect(try store.count(Member.self) == Member.all.count - 1 - young)
            #expect(try store.count(Member.self, where: Column("age") < 25) == 0)
            #expect(try store.deleteAll(Member.self) == Member.all.count - 1 - young)
            #expect(try store.count(Member.self) == 0)
        },
        check("reading an empty store finds nothing and creates nothing") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            #expect(try store.fetchAll(Member.self).isEmpty)
            #expect(try store.fetch(Member.self, id: 1) == nil)
            #expect(try store.count(Member.self, where: Column("age") > 1) == 0)
            #expect(try store.deleteAll(Member.self) == 0)
            #expect(try store.fetchDictionaries(from: "members").isEmpty)
        },
        check("a query naming an unknown column is an error") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Member.all[0])
            let error = expectError(.unknownColumn) { _ = try store.fetchAll(Member.self, where: Column("agee") > 1) }
            #expect(error?.column == "agee")
            expectError(.unknownColumn) { _ = try store.fetchAll(Member.self, orderBy: [.ascending("x\"y")]) }
            expectError(.misuse) { _ = try store.fetchAll(Member.self, limit: -1) }
        },
    ]
}
