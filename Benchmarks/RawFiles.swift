import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file archive baseline: Foundation's coders with one atomic write per record, a file per
/// person named by its id, as an app keeping a folder of JSON documents would.
struct RawFiles {
    let folder: URL
    private let encoder: JSONEncoder
    private let decoder = JSONDecoder()

    init(folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        encoder = JSONEncoder()
    }

    private func url(_ id: Int64) -> URL { folder.appendingPathComponent("\(id).json") }

    /// Writes each person with `JSONEncoder` and `Data.write(options: .atomic)`.
    func insert(_ people: some Sequence<Person>) throws {
        for person in people { try encoder.encode(person).write(to: url(person.id), options: .atomic) }
    }

    /// Writes each person with `JSONEncoder` into a new file, in place (`open`, `write`,
    /// `close`: no temporary file, no rename, no fsync): the scaling mode's insert baseline, what
    /// the file system itself charges per file as the folder grows. (The atomic write took 5 ms a
    /// file on the shared machine: a million would take over an hour.)
    func insertInPlace(_ people: some Sequence<Person>) throws {
        for person in people {
            let bytes = try encoder.encode(person)
            let descriptor = createFile(url(person.id).path)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            defer { close(descriptor) }
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
        }
    }

    /// `JSONSerialization`, then each object written back with `JSONSerialization` and an atomic
    /// write.
    func ingest(json: Data) throws -> Int {
        guard let rows = try JSONSerialization.jsonObject(with: json) as? [[String: Any]] else {
            throw CocoaError(.coderReadCorrupt)
        }
        for row in rows {
            let id = (row["id"] as? NSNumber)?.int64Value ?? 0
            try JSONSerialization.data(withJSONObject: row).write(to: url(id), options: .atomic)
        }
        return rows.count
    }

    /// Calls `body` with every person, read and decoded file by file (in directory order).
    func stream(_ body: (Person) throws -> Void) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".json") {
            try body(decoder.decode(Person.self, from: Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    /// Every person, sorted by id as `fetchAll` returns them.
    func fetchAll(where isIncluded: (Person) -> Bool = { _ in true }) throws -> [Person] {
        var people: [Person] = []
        try stream { if isIncluded($0) { people.append($0) } }
        people.sort { $0.id < $1.id }
        return people
    }

    /// The listed people, each file read and decoded once, by id.
    func fetchIn(_ ids: [Int64]) throws -> [Person] {
        try Set(ids).sorted().map { try decoder.decode(Person.self, from: Data(contentsOf: url($0))) }
    }

    func lookUp(_ ids: [Int64]) throws -> Int {
        var found = 0
        for id in ids where try decoder.decode(Person.self, from: Data(contentsOf: url(id))).id == id { found += 1 }
        return found
    }
}

/// `open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)`, outside `RawFiles`, whose own static `open`
/// would hide the C function.
private func createFile(_ path: String) -> Int32 {
    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
}
