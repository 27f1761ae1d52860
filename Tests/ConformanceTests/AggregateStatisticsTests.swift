import Foundation
import Storage
import StorageTestSupport
import Testing

/// Aggregates over a real data set (the airports of `Tests/Fixtures/airports.csv`) on every
/// backend, against Python's `statistics.fmean` and `math.fsum` computed by a `python3` child
/// process: the mean is the exactly rounded sum divided by the count, which is what
/// `statistics.fmean` computes, and the sum the exact sum rounded once, as `math.fsum`.
@Suite("Aggregates against Python's statistics", .dedicatedThreads)
struct AggregateStatisticsTests {
    /// Per state, in byte order: the count, the distinct cities, the sum and mean of the
    /// latitudes, the extreme longitudes; then the same over every airport under the state `*`.
    static let script = """
        import csv, math, statistics, sys
        rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
        groups = {}
        for row in rows:
            groups.setdefault(row["state"], []).append(row)
        def line(state, group):
            latitudes = [float(row["latitude"]) for row in group]
            longitudes = [float(row["longitude"]) for row in group]
            print("\\t".join([state, str(len(group)), str(len({row["city"].encode() for row in group})),
                repr(math.fsum(latitudes)), repr(statistics.fmean(latitudes)),
                repr(min(longitudes)), repr(max(longitudes))]))
        for state in sorted(groups, key=lambda name: name.encode()):
            line(state, groups[state])
        line("*", rows)
        """

    /// Python's answer, one array of fields per line.
    static func expected() throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, FixtureDataTests.airportsFile.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
    }

    static let aggregates: [Aggregate] = [
        .count, .countDistinct("city"), .sum("latitude"), .average("latitude"), .minimum("longitude"),
        .maximum("longitude"),
    ]

    static func fields(_ row: [String: StorageValue], state: String) -> [String] {
        func text(_ value: StorageValue?) -> String {
            switch value {
            case .integer(let number)?: return String(number)
            case .real(let number)?: return "\(number)"
            default: return String(describing: value)
            }
        }
        return [state] + aggregates.map { text(row[$0.name]) }
    }

    @Test(arguments: fixtures)
    func airportsPerStateMatchPythonsStatistics(_ fixture: BackendFixture) throws {
        let expected = try Self.expected()
        try #require(expected.count == 58)
        try TemporaryDirectory.with("aggregate-statistics") { directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(csv: FixtureDataTests.airportsFile, into: "airports", primaryKey: "iata")
            let perState = try store.aggregate(in: "airports", Self.aggregates, groupBy: [Column("state")])
            let all = try store.aggregate(in: "airports", Self.aggregates)
            var got = perState.map { row -> [String] in
                guard case .text(let state)? = row["state"] else { return ["?"] }
                return Self.fields(row, state: state)
            }
            got += all.map { Self.fields($0, state: "*") }
            #expect(got.count == expected.count)
            for (ours, python) in zip(got, expected) {
                // Python's repr and Swift's description both print the shortest text that reads
                // back as the same real, so equal text is an equal real.
                #expect(ours == python)
            }
        }
    }
}
