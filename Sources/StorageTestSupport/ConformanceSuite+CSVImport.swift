import Foundation
import Storage
import Testing

/// `insert(csv:into:primaryKey:progress:)` on every backend: RFC 4180's corner cases, whole-column
/// typing, malformed input refused with the line and nothing stored, natural keys.
struct CSVImportChecks {
    private func csvError(_ body: () throws -> Void) -> StorageError? {
        do {
            try body()
            return nil
        } catch let error as StorageError {
            return error
        } catch {
            return nil
        }
    }

    func rfc4180CornerCases(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            // A byte order mark, CRLF and LF mixed, quoted commas, doubled quotes, a quoted line
            // break (kept as written, CRLF included), empty fields quoted and not, a blank line,
            // and no line break after the last record.
            let text =
                "\u{FEFF}id,name,price,code,note\r\n"
                + "1,\"Smith, Jane\",1,007,\"she said \"\"hi\"\"\"\r\n"
                + "2,plain,2.5,12,\"two\r\nlines\"\n"
                + "\n"
                + "3,,,\"\",\n"
                + "4,\"caf\u{E9}\",-0.0,-5,last"
            let count = try store.insert(csv: Data(text.utf8), into: "corners")
            #expect(count == 4)
            let rows = try store.fetchDictionaries(from: "corners", orderBy: [.ascending("id")])
            #expect(rows.count == 4)
            #expect(rows[0]["id"] == .integer(1))
            #expect(rows[0]["name"] == .text("Smith, Jane"))
            #expect(rows[0]["price"] == .real(1))  // the column holds 2.5 too: real throughout
            #expect(rows[0]["code"] == .text("007"))  // a leading zero keeps the column text
            #expect(rows[0]["note"] == .text("she said \"hi\""))
            #expect(rows[1]["note"] == .text("two\r\nlines"))
            #expect(rows[1]["code"] == .text("12"))
            #expect(rows[2]["name"] == .null)
            #expect(rows[2]["price"] == .null)
            #expect(rows[2]["code"] == .null)
            #expect(rows[2]["note"] == .null)
            #expect(rows[3]["name"] == .text("caf\u{E9}"))
            guard case .real(let negativeZero)? = rows[3]["price"] else {
                Issue.record("price is not real: \(String(describing: rows[3]["price"]))")
                return
            }
            // -0.0 is stored as 0.0 on every backend, as a typed save stores it.
            #expect(negativeZero == 0 && negativeZero.sign == .plus)
            #expect(rows[3]["note"] == .text("last"))
            // `id` is the key: every record has one.
            #expect(try store.insert(csv: Data("id,name\n1,again\n".utf8), into: "corners") == 1)
            #expect(try store.fetchDictionaries(from: "corners").count == 4)
        }
    }

    func columnTypesDependOnEveryRecordNotOnTheirOrder(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            let records = [
                "1776,1,0.5,1e3,18446744073709551615",
                "Heat,2,1,2,3",
                "Up,3,2,nan,4",
            ]
            for (name, order) in [("forward", records), ("reversed", records.reversed())] {
                let text = "title,n,x,y,big\n" + order.joined(separator: "\n")
                try store.insert(csv: Data(text.utf8), into: name)
                let rows = try store.fetchDictionaries(from: name, orderBy: [.ascending("n")])
                #expect(rows.map { $0["title"] } == [.text("1776"), .text("Heat"), .text("Up")], "\(name)")
                #expect(rows.map { $0["n"] } == [.integer(1), .integer(2), .integer(3)], "\(name)")
                #expect(rows.map { $0["x"] } == [.real(0.5), .real(1), .real(2)], "\(name)")
                #expect(rows.map { $0["y"] } == [.text("1e3"), .text("2"), .text("nan")], "\(name)")
                // Beyond Int64: text, never rounded to a real.
                #expect(rows[0]["big"] == .text("18446744073709551615"), "\(name)")
            }
        }
    }

    func malformedCSVNamesTheLineAndStoresNothing(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(csv: Data("id,name\n100,kept\n".utf8), into: "things")
            let cases: [(Data, String)] = [
                (Data("id,name\n1,a\n2,\"open\n3,c\n".utf8), "line 3"),  // the quote opened on line 3 never closes
                (Data("id,name\n1,a\n2,b,extra\n".utf8), "line 3"),  // ragged: too many fields
                (Data("id,name\n1,a\r\n2,b\r\n3\r\n".utf8), "line 4"),  // ragged: too few
                (Data("id,name\n1,a\"b\n".utf8), "line 2"),  // a quote inside an unquoted field
                (Data("id,name\n1,\"a\"b\n".utf8), "line 2"),  // text after a closing quote
                (Data("id,name\n1,\"two\nlines\"\n2,x,y\n".utf8), "line 4"),  // lines count inside quotes
                (Data("id,name\n1,".utf8) + [0xFF, 0x0A], "line 2"),  // not UTF-8
                (Data("id,id\n1,2\n".utf8), "line 1"),  // a column named twice
            ]
            for (data, line) in cases {
                let text = String(decoding: data, as: UTF8.self).debugDescription
                let error = csvError { try store.insert(csv: data, into: "things") }
                #expect(error?.code == .invalidCSV, "\(text): \(String(describing: error))")
                #expect(error?.message.contains(line) == true, "\(text): \(String(describing: error?.message))")
            }
            let rows = try store.fetchDictionaries(from: "things")
            #expect(rows.count == 1)
            #expect(rows.first?["name"] == .text("kept"))
            #expect(csvError { try store.insert(csv: Data("id,name\n1,\"never closed\n".utf8), into: "fresh") } != nil)
            #expect(try store.fetchDictionaries(from: "fresh").isEmpty)
        }
    }

    func naturalKeyReplacesOnReimportAndIsRequired(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            let text = "code,name\nAAA,first\nBBB,second\n"
            try store.insert(csv: Data(text.utf8), into: "places", primaryKey: "code")
            try store.insert(csv: Data(text.utf8), into: "places", primaryKey: "code")
            #expect(try store.fetchDictionaries(from: "places").count == 2)
            // Without a key (and no `id`), records get auto keys in `_key`: a second import adds.
            try store.insert(csv: Data(text.utf8), into: "loose")
            try store.insert(csv: Data(text.utf8), into: "loose")
            let loose = try store.fetchDictionaries(from: "loose")
            #expect(loose.count == 4)
            #expect(loose.allSatisfy { $0[CollectionSchema.autoKeyColumn] != nil })

            let missing = csvError {
                try store.insert(csv: Data("code,name\nCCC,x\n,y\n".utf8), into: "places", primaryKey: "code")
            }
            #expect(missing?.code == .invalidKey)
            #expect(missing?.message.contains("line 3") == true, "\(String(describing: missing))")
            let unknown = csvError { try store.insert(csv: Data(text.utf8), into: "other", primaryKey: "nope") }
            #expect(unknown?.code == .invalidKey)
            // Two records of one file under one key: the same content is one record, different
            // content is an error naming both lines.
            let clash = csvError {
                try store.insert(csv: Data("code,name\nDDD,x\nEEE,y\nDDD,z\n".utf8), into: "places", primaryKey: "code")
            }
            #expect(clash?.code == .constraintViolation)
            #expect(clash?.message.contains("lines 2 and 4") == true, "\(String(describing: clash))")
            #expect(clash?.key == .text("DDD"))
            #expect(try store.fetchDictionaries(from: "places").count == 2)
            let twice = "code,name\nFFF,x\nFFF,x\n"
            #expect(try store.insert(csv: Data(twice.utf8), into: "places", primaryKey: "code") == 2)
            #expect(try store.fetchDictionaries(from: "places").count == 3)
        }
    }

    func aLaterFileFollowsTheStoredColumnTypes(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("csv-later")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        #expect(try await store.insert(csv: Data("id,n,x,t\n1,1,0.5,a\n".utf8), into: "later") == 1)
        // Integer widens to text; numbers go into a text column as their exact digits.
        try await store.insert(csv: Data("id,n,x,t\n2,B7,1,0.30000000000000004\n".utf8), into: "later")
        let rows = try await store.fetchDictionaries(from: "later", orderBy: [.ascending("id")])
        #expect(rows.map { $0["n"] } == [.text("1"), .text("B7")])
        #expect(rows.map { $0["x"] } == [.real(0.5), .real(1)])
        #expect(rows.map { $0["t"] } == [.text("a"), .text("0.30000000000000004")])
        // Text in a real column is refused on every backend, naming the column; nothing is stored.
        let file = directory.url.appendingPathComponent("later.csv")
        try Data("id,x\n3,1.5\n4,many\n".utf8).write(to: file)
        do {
            try await store.insert(csv: file, into: "later")
            Issue.record("text went into a real column")
        } catch let error as StorageError {
            #expect(error.code == .schemaMismatch)
            #expect(error.column == "x")
        }
        #expect(try await store.count(in: "later") == 2)
    }

    /// The import's `progress:` reports the first pass (`.reading`, no total) and then the second
    /// (`.importing`, with the total the first counted), in order, ending at every record.
    func progressReportsBothPasses(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            let count = 10_000
            var text = "id,name\n"
            for id in 1...count { text += "\(id),n\(id)\n" }
            let file = directory.appendingPathComponent("many.csv")
            try Data(text.utf8).write(to: file)
            var steps: [StoreCopyProgress] = []
            #expect(try store.insert(csv: file, into: "many", progress: { steps.append($0) }) == count)
            let reading = steps.filter { $0.phase == .reading }
            let importing = steps.filter { $0.phase == .importing }
            #expect(reading.count >= 2 && importing.count >= 2, "\(steps)")
            #expect(steps.firstIndex { $0.phase == .importing }! > steps.lastIndex { $0.phase == .reading }!)
            #expect(reading.last?.records == count)
            #expect(reading.allSatisfy { $0.total == nil && $0.collection == "many" })
            #expect(importing.allSatisfy { $0.total == count })
            #expect(importing.map(\.records) == importing.map(\.records).sorted())
            #expect(importing.last!.records > count / 2)
            // From memory too.
            var fromData = 0
            try store.insert(csv: Data("id,name\n1,x\n".utf8), into: "few", progress: { _ in fromData += 1 })
            #expect(fromData >= 1)
        }
    }

    func insideATransactionAllOrNothing(_ fixture: BackendFixture) throws {
        struct Abort: Error {}
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            let file = directory.appendingPathComponent("in.csv")
            try Data("id,v\n1,a\n2,b\n".utf8).write(to: file)
            #expect(throws: Abort.self) {
                try store.transaction { tx in
                    #expect(try tx.insert(csv: file, into: "t") == 2)
                    #expect(try tx.fetchDictionaries(from: "t").count == 2)
                    throw Abort()
                }
            }
            #expect(try store.fetchDictionaries(from: "t").isEmpty)
            _ = try store.transaction { tx in try tx.insert(csv: Data("id,v\n3,c\n".utf8), into: "t") }
            #expect(try store.fetchDictionaries(from: "t").count == 1)
        }
    }

    /// Random text fields (commas, quotes, every kind of line break, spaces, non-ASCII, empty)
    /// written with random quoting and record endings: every record reads back as written.
    func randomFieldsWrittenAsCSVReadBackAsWritten(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            var random = SeededGenerator(seed: 4_180)
            let pieces = ["a", "b", ",", "\"", "\r", "\n", "\r\n", " ", "\u{E9}", "\u{1F600}", "\t", ";"]
            for round in 0..<12 {
                let collection = "random_csv_\(round)"
                var rows: [[String?]] = []
                for _ in 0..<Int.random(in: 1...40, using: &random) {
                    rows.append(
                        (0..<3).map { _ in
                            guard Int.random(in: 0..<6, using: &random) > 0 else { return nil }
                            // A letter first, so that no field reads as a number.
                            return "x"
                                + (0..<Int.random(in: 0...6, using: &random)).map { _ in
                                    pieces.randomElement(using: &random)!
                                }.joined()
                        }
                    )
                }
                let ending = ["\r\n", "\n", "\r"].randomElement(using: &random)!
                func field(_ text: String?) -> String {
                    guard let text else { return Bool.random(using: &random) ? "" : "\"\"" }
                    // By scalar: "\r\n" is one Character, which would hide a lone "\r".
                    let needsQuotes = text.unicodeScalars.contains { ",\"\r\n".unicodeScalars.contains($0) }
                    guard needsQuotes || Bool.random(using: &random) else { return text }
                    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                }
                var text = Bool.random(using: &random) ? "\u{FEFF}" : ""
                text += "id,c0,c1,c2"
                for (index, row) in rows.enumerated() {
                    text += ending + "\(index + 1)," + row.map { field($0) }.joined(separator: ",")
                }
                if Bool.random(using: &random) { text += ending }
                #expect(try store.insert(csv: Data(text.utf8), into: collection) == rows.count, "round \(round)")
                let stored = try store.fetchDictionaries(from: collection, orderBy: [.ascending("id")])
                #expect(stored.count == rows.count, "round \(round)")
                for (index, row) in rows.enumerated() where index < stored.count {
                    #expect(stored[index]["id"] == .integer(Int64(index + 1)), "round \(round)")
                    for column in 0..<3 {
                        #expect(
                            stored[index]["c\(column)"] == (row[column].map { .text($0) } ?? .null),
                            "round \(round) record \(index + 1) c\(column)"
                        )
                    }
                }
            }
        }
    }

    /// Valid CSV broken at random (a quote, a byte or a line break put in, the end cut off):
    /// the import either reads it or refuses it with `.invalidCSV`, and a refused import stores
    /// nothing.
    func csvBrokenAtRandomIsReadOrRefusedWhole(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(csv: Data("id,name\n1,first\n".utf8), into: "broken", primaryKey: "id")
            var random = SeededGenerator(seed: 4_181)
            let valid = Array("id,name\n2,\"two, quoted\"\n3,\"say \"\"hi\"\"\"\r\n4,plain\n5,\"a\nb\"\n".utf8)
            var refused = 0
            for _ in 0..<300 {
                var bytes = valid
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let at = Int.random(in: 0...bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes.insert(UInt8(ascii: "\""), at: at)
                    case 1:
                        bytes.insert(
                            [0, 0xFF, UInt8(ascii: ","), UInt8(ascii: "\r")].randomElement(using: &random)!,
                            at: at
                        )
                    case 2: bytes.insert(contentsOf: Array("\n\n".utf8), at: at)
                    default: bytes.removeLast(bytes.count - at)
                    }
                }
                let before = try store.fetchDictionaries(from: "broken", orderBy: [.ascending("id")])
                do {
                    _ = try store.insert(csv: Data(bytes), into: "broken", primaryKey: "id")
                } catch let error as StorageError {
                    refused += 1
                    #expect(
                        [
                            .invalidCSV, .typeMismatch, .invalidKey, .constraintViolation, .invalidIdentifier,
                            .schemaMismatch,
                        ]
                        .contains(error.code),
                        "\(error)"
                    )
                    #expect(try store.fetchDictionaries(from: "broken", orderBy: [.ascending("id")]) == before)
                }
                // Put the collection back as it was, so each round starts from the same records.
                _ = try store.deleteAll(from: "broken", where: Column("id") > 1)
            }
            #expect(refused > 0)
        }
    }
}

extension ConformanceSuite {
    static let csvImportChecks: [ConformanceCheck] = [
        check("rfc4180 corner cases") { fixture, _ in try CSVImportChecks().rfc4180CornerCases(fixture) },
        check("column types depend on every record not on their order") { fixture, _ in
            try CSVImportChecks().columnTypesDependOnEveryRecordNotOnTheirOrder(fixture)
        },
        check("malformed CSV names the line and stores nothing") { fixture, _ in
            try CSVImportChecks().malformedCSVNamesTheLineAndStoresNothing(fixture)
        },
        check("natural key replaces on reimport and is required") { fixture, _ in
            try CSVImportChecks().naturalKeyReplacesOnReimportAndIsRequired(fixture)
        },
        check("progress reports both passes") { fixture, _ in try CSVImportChecks().progressReportsBothPasses(fixture)
        },
        check("inside a transaction all or nothing") { fixture, _ in
            try CSVImportChecks().insideATransactionAllOrNothing(fixture)
        },
        check("random fields written as CSV read back as written") { fixture, _ in
            try CSVImportChecks().randomFieldsWrittenAsCSVReadBackAsWritten(fixture)
        },
        check("csv broken at random is read or refused whole") { fixture, _ in
            try CSVImportChecks().csvBrokenAtRandomIsReadOrRefusedWhole(fixture)
        },
    ]

    static let csvImportAsyncChecks: [ConformanceCheck] = [
        asyncCheck("a later file follows the stored column types") { fixture, _ in
            try await CSVImportChecks().aLaterFileFollowsTheStoredColumnTypes(fixture)
        }
    ]
}
