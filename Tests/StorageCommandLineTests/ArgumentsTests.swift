import Testing

@testable import StorageCommandLine

@Suite("Arguments")
struct ArgumentsTests {
    @Test func optionsFlagsAndPositionalsAreTakenApart() throws {
        let parsed = try Arguments(
            parsing: ["a.sqlite", "--format", "csv", "People", "--limit=5", "--json", "--", "--literal", "-"],
            options: ["format", "limit"],
            flags: ["json"]
        )
        #expect(parsed.positionals == ["a.sqlite", "People", "--literal", "-"])
        #expect(parsed.options == ["format": "csv", "limit": "5"])
        #expect(parsed.flags == ["json"])
        #expect(try parsed.integer("limit") == 5)
    }

    @Test func unknownOptionsMissingValuesAndBadNumbersAreUsageErrors() throws {
        #expect(throws: UsageError("unknown option '--nope'")) {
            try Arguments(parsing: ["--nope"], options: [], flags: [])
        }
        #expect(throws: UsageError("unknown option '-x'")) {
            try Arguments(parsing: ["-x"], options: [], flags: [])
        }
        #expect(throws: UsageError("--limit needs a value")) {
            try Arguments(parsing: ["--limit"], options: ["limit"], flags: [])
        }
        #expect(throws: UsageError("--json takes no value")) {
            try Arguments(parsing: ["--json=yes"], options: [], flags: ["json"])
        }
        let parsed = try Arguments(parsing: ["--limit", "-3"], options: ["limit"], flags: [])
        #expect(throws: UsageError("--limit needs a whole number of at least 0, got '-3'")) {
            try parsed.integer("limit")
        }
        let help = try Arguments(parsing: ["-h"], options: [], flags: [])
        #expect(help.flags == ["help"])
    }

    @Test func positionalsAreCounted() throws {
        let parsed = try Arguments(parsing: ["a", "b", "c"], options: [], flags: [])
        #expect(throws: UsageError("unexpected argument 'c'")) { try parsed.positionals(["A", "B"], required: 1) }
        #expect(throws: UsageError("missing D")) { try parsed.positionals(["A", "B", "C", "D"], required: 4) }
        #expect(try parsed.positionals(["A", "B", "C"], required: 2) == ["a", "b", "c"])
    }
}
