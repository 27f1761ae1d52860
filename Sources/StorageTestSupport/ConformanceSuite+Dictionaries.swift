import Foundation
import Storage
import Testing

extension ConformanceSuite {
    static let dictionaryChecks: [ConformanceCheck] = [
        check("JSON from a server creates, widens and extends a collection") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let first = Data(
                #"[{"id": 1, "value": 10, "label": "a", "meta": {"n": 1}}, {"id": 2, "value": 20, "label": null}]"#.utf8
            )
            #expect(try store.insert(jsonArray: first, into: "readings") == 2)
            var rows = try store.fetchDictionaries(from: "readings", orderBy: [.ascending("id")])
            #expect(rows.count == 2)
            #expect(rows[0]["value"] == .integer(10))
            #expect(rows[0]["meta"] == .text(#"{"n":1}"#))
            #expect(rows[1]["label"] == .null)

            try store.insert(jsonArray: Data(#"[{"id": 3, "value": 2.5, "extra": true}]"#.utf8), into: "readings")
            rows = try store.fetchDictionaries(from: "readings")
            #expect(rows.map { $0["value"] } == [.real(10), .real(20), .real(2.5)])
            #expect(rows.map { $0["extra"] } == [.null, .null, .integer(1)])

            try store.insert(dictionaries: [["id": 2, "value": 21.5, "label": "replaced"]], into: "readings")
            let typed = try store.fetchAll(Reading.self)
            #expect(typed.count == 3)
            #expect(typed[0] == Reading(id: 1, value: 10, label: "a", meta: ["n": 1]))
            #expect(typed[1] == Reading(id: 2, value: 21.5, label: "replaced", meta: nil))
            #expect(try store.fetchDictionaries(from: "readings", where: Column("value") > 15).count == 1)
        },
        check("JSON rows without ids get auto-assigned keys") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            // An empty batch creates nothing, so a later batch with ids still keys by id.
            #expect(try store.insert(jsonArray: Data("[]".utf8), into: "later") == 0)
            try store.insert(jsonArray: Data(#"[{"id": 7}]"#.utf8), into: "later")
            #expect(try store.fetchDictionaries(from: "later") == [["id": .integer(7)]])
            #expect(try store.insert(jsonArray: Data(#"[{"word": "a"}, {"word": "b"}]"#.utf8), into: "words") == 2)
            let words = try store.fetchDictionaries(from: "words")
            #expect(words.map { $0["word"] } == [.text("a"), .text("b")])
            #expect(try store.schema(of: "words")?.hasAutoKey == true)
            #expect(Set(words.compactMap { $0[CollectionSchema.autoKeyColumn] }).count == 2)
        },
        check("stored values that do not fit the Swift type are errors naming the column") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(dictionaries: [["id": 1, "small": 300, "word": "seven"]], into: "narrow")
            let range = expectError(.valueOutOfRange) { _ = try store.fetchAll(NarrowReading.self) }
            #expect(range?.column == "small")
            #expect(range?.collection == "narrow")
            let text = expectError(.typeMismatch) { _ = try store.fetchAll(TextAsInt.self) }
            #expect(text?.column == "word")
        },
    ]
}
