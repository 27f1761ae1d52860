package import Foundation
package import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The migration workload of the crash harness: a store of `MigratedPersonV1` records migrated by
/// three migrations (a column renamed, one dropped, every record rewritten by `transform`), each
/// of which also writes a `MigrationTick`. A kill at any moment must leave the store as it was
/// after some prefix of the migrations, whole.
package enum MigrationWorkload {
    /// The migrations' names, in order.
    package static let names = ["1-rename", "2-drop", "3-transform"]

    /// Saves `count` people of the first version.
    package static func seed(_ store: ObjectStore, count: Int) throws {
        try store.save(contentsOf: (1...Int64(count)).lazy.map(MigratedPersonV1.make))
    }

    /// The workload's migrator; each migration calls `announce` with "begin NAME" first.
    package static func migrator(announce: @escaping @Sendable (String) -> Void = { _ in }) -> Migrator {
        var migrator = Migrator()
        migrator.register(names[0]) { m in
            announce("begin " + m.name)
            try m.renameColumn("name", to: "fullName", in: MigratedPersonV1.collectionName)
            try m.tick()
        }
        migrator.register(names[1]) { m in
            announce("begin " + m.name)
            try m.dropColumn("legacy", from: MigratedPersonV1.collectionName)
            try m.tick()
        }
        migrator.register(names[2]) { m in
            announce("begin " + m.name)
            try m.transform(MigratedPersonV2.self, to: MigratedPersonV3.self) { MigratedPersonV3.from($0) }
            try m.tick()
        }
        return migrator
    }

    /// Checks that `store` (seeded with `count` people) is as it was after a whole prefix of the
    /// migrations, and returns that prefix.
    /// - Throws: `CrashCheckFailure` for any other state.
    @discardableResult
    package static func verify(_ store: ObjectStore, count: Int) throws -> [String] {
        let applied = try migrator().appliedMigrations(in: store)
        guard Array(names.prefix(applied.count)) == applied else {
            throw CrashCheckFailure("applied migrations \(applied) are not a prefix of \(names)")
        }
        let ticks = try store.fetchAll(MigrationTick.self, orderBy: [.ascending("before")])
        guard ticks.map(\.id) == applied, ticks.map(\.before) == Array(0..<applied.count) else {
            throw CrashCheckFailure("ticks \(ticks) do not match the applied migrations \(applied)")
        }
        guard let schema = try store.schema(of: MigratedPersonV1.collectionName) else {
            throw CrashCheckFailure("the people are gone")
        }
        let columns = Set(schema.columns.map(\.name))
        let expected: Set<String> =
            switch applied.count {
            case 0: ["id", "name", "email", "legacy"]
            case 1: ["id", "fullName", "email", "legacy"]
            case 2: ["id", "fullName", "email"]
            default: ["id", "fullName", "email", "nameLength"]
            }
        guard columns == expected else {
            throw CrashCheckFailure("after \(applied) the columns are \(columns.sorted()), not \(expected.sorted())")
        }
        guard try store.count(in: MigratedPersonV1.collectionName) == count else {
            throw CrashCheckFailure("\(try store.count(in: MigratedPersonV1.collectionName)) people, not \(count)")
        }
        for id in [1, Int64(count / 2), Int64(count)] {
            let person = MigratedPersonV1.make(id)
            let matches: Bool
            switch applied.count {
            case 0: matches = try store.fetch(MigratedPersonV1.self, id: id) == person
            case 1, 2:
                matches =
                    try store.fetch(MigratedPersonV2.self, id: id)
                    == MigratedPersonV2(id: id, fullName: person.name, email: person.email)
            default:
                let old = MigratedPersonV2(id: id, fullName: person.name, email: person.email)
                matches = try store.fetch(MigratedPersonV3.self, id: id) == MigratedPersonV3.from(old)
            }
            guard matches else { throw CrashCheckFailure("person \(id) is not as \(applied) leave it") }
        }
        return applied
    }

    /// Starts the crash writer's migration workload on the store at `path`; read its output with
    /// `lines(of:killAfter:)`.
    /// - Parameters:
    ///   - backend: the backend's name, as `DiskBackend` spells it.
    ///   - path: the store's path (seeded already).
    ///   - startAt: when the writer starts migrating (several writers start together), if given.
    /// - Returns: the running writer, its output a pipe.
    /// - Throws: the process's error when it cannot be started.
    package static func runWriter(backend: String, path: String, startAt: Date? = nil) throws -> Process {
        let process = Process()
        process.executableURL = CrashHarness.executable
        var arguments = ["--backend", backend, "--path", path, "--workload", "migrate"]
        if let startAt { arguments += ["--start-at", String(startAt.timeIntervalSince1970)] }
        process.arguments = arguments
        process.standardOutput = Pipe()
        try process.run()
        return process
    }

    /// Reads what `process` (from `runWriter`) prints until it ends, killing it with SIGKILL
    /// `killAfter` microseconds after its first "begin" line when given.
    /// - Returns: its lines.
    package static func lines(of process: Process, killAfter: Int? = nil) -> [String] {
        guard let output = process.standardOutput as? Pipe else { return [] }
        let reader = output.fileHandleForReading
        var received = Data()
        if let killAfter {
            while !String(decoding: received, as: UTF8.self).contains("begin ") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                received.append(chunk)
            }
            usleep(UInt32(max(0, killAfter)))
            kill(process.processIdentifier, SIGKILL)
        }
        received.append(reader.readDataToEndOfFile())
        process.waitUntilExit()
        return String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
