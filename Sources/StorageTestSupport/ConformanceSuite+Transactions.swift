import Foundation
import Storage
import Testing

struct AbortTransaction: Error, Equatable {
    let reason: String
}

extension ConformanceSuite {
    static let transactionChecks: [ConformanceCheck] = [
        check("a transaction is all or nothing and rethrows the error unchanged") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Member.all[0])
            do {
                try store.transaction { tx in
                    try tx.save(Member.all[1])
                    try tx.delete(Member.self, id: 1)
                    try tx.save(Note(text: "inside"))
                    throw AbortTransaction(reason: "test")
                }
                Issue.record("the transaction did not rethrow")
            } catch let error as AbortTransaction {
                #expect(error == AbortTransaction(reason: "test"))
            }
            #expect(try store.fetchAll(Member.self) == [Member.all[0]])
            #expect(try store.count(Note.self) == 0)
        },
        // On PostgreSQL the second and later transactions commit with a pipelined check of the
        // cache's answer (no full-text index) whose rows followed a streamed read's single-row
        // mode: the commit failed as a lost connection.
        check("transactions that read what they wrote commit, one after another") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Member.all[0])
            for round in 1...3 {
                try store.transaction { tx in
                    try tx.save(Member.all[round])
                    #expect(try tx.fetchAll(Member.self).count == round + 1, "round \(round)")
                }
                #expect(try store.fetchAll(Member.self) == Array(Member.all.prefix(round + 1)), "round \(round)")
            }
        },
        check("reads inside a transaction see its own writes") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let count = try store.transaction { tx -> Int in
                try tx.save(contentsOf: Member.all.prefix(5))
                #expect(try tx.fetch(Member.self, id: 3) == Member.all[2])
                try tx.delete(Member.self, id: 3)
                #expect(try tx.fetch(Member.self, id: 3) == nil)
                #expect(try tx.fetchAll(Member.self, where: Column("id") <= 2).count == 2)
                var streamed = 0
                try tx.forEach(Member.self) { _ in streamed += 1 }
                #expect(streamed == 4)
                // Calls on the store from inside the closure join the transaction.
                #expect(try store.count(Member.self) == 4)
                return try tx.count(Member.self)
            }
            #expect(count == 4)
            #expect(try store.count(Member.self) == 4)
        },
        check("a transaction handle cannot be used after its closure") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let escaped = try store.transaction { $0 }
            expectError(.misuse) { try escaped.save(Member.all[0]) }
            #expect(try store.count(Member.self) == 0)
        },
        check("a value that cannot be stored stops its batch, and the batch writes nothing") { fixture, directory in
            struct Wide: Codable {
                var id: Int64
                var size: UInt64
            }
            let store = try fixture.openStore(in: directory)
            try store.save(Wide(id: 1, size: 1))
            let batch = [Wide(id: 2, size: 2), Wide(id: 3, size: UInt64.max), Wide(id: 4, size: 4)]
            let error = expectError(.valueOutOfRange) { try store.save(contentsOf: batch) }
            #expect(error?.column == "size")
            #expect(try store.count(Wide.self) == 1)
            let rows = [["id": 5, "v": 1], ["id": 6, "v": NSObject()]] as [[String: Any]]
            expectError(.unsupportedType) { try store.insert(dictionaries: rows, into: "loose") }
            #expect(try store.fetchDictionaries(from: "loose").isEmpty)
        },
        check("a unique index violation writes nothing, also inside save(contentsOf:)") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all.prefix(3))
            var clash = Member.all[5]
            clash.email = Member.all[0].email
            let error = expectError(.constraintViolation) { try store.save(clash) }
            #expect(error?.collection == "members")
            let batch = [Member.all[10], Member.all[11], clash, Member.all[12]]
            expectError(.constraintViolation) { try store.save(contentsOf: batch) }
            #expect(try store.fetchAll(Member.self) == Array(Member.all.prefix(3)))
            // Nulls never conflict, and the store is still usable.
            var first = Member.all[20]
            var second = Member.all[21]
            first.email = nil
            second.email = nil
            try store.save(contentsOf: [first, second])
            #expect(try store.count(Member.self) == 5)
        },
    ]
}
