import Foundation
import PostgreSQLBackend
import Storage

/// ObjectStore on PostgreSQL beside hand-written libpq code (`RawPostgreSQL`) on the same data,
/// in the same run, on the server `STORAGE_POSTGRES_URL` names (over its Unix socket when the URL
/// says so, as `scripts/postgres.sh` prints it).
extension RawPostgreSQL: RawBaseline {
    static let backend = "postgresql"
    static let goals: [Operation: Double] = [
        .insert: 0.5, .fetchAll: 0.5, .lookup: 0.7, .filter: 0.5, .singleCommits: 0.7,
    ]
    static let baselines: [Operation: String] = [
        .insert: "raw COPY … FROM STDIN binary",
        .fetchAll: "raw libpq, binary results, columns by index",
        .lookup: "raw prepared SELECT … WHERE id = $1",
        .filter: "raw prepared SQL, age BETWEEN 30 AND 39",
        .forEach: "raw single-row loop",
        .ingestJSON: "JSONSerialization + raw COPY binary",
        .singleCommits: "raw autocommit upsert per record",
        .inList: "raw = ANY($1::int8[]), the ids as one array parameter",
    ]
    static let streamMemoryGoal: Int? = 64 * 1_048_576

    static func fileName(_ role: String) -> String { role + ".postgresql" }

    static func openStore(path: String) throws -> ObjectStore {
        try ObjectStore(
            backend: .postgreSQL(url: try url(), configuration: .init(schema: schema(for: path) + "_ours"))
        )
    }

    static func open(path: String, forJSON: Bool) throws -> RawPostgreSQL {
        try RawPostgreSQL(path: path, avatarType: forJSON ? "text" : "bytea")
    }

    static func remove(_ path: String, in context: BenchmarkContext) {
        dropSchema(schema(for: path))
        dropSchema(schema(for: path) + "_ours")
    }

    func insertAll(_ people: [Person]) throws { try copy(people) }
    func commitEach(_ people: ArraySlice<Person>) throws { try upsertEach(people) }
    func readAll() throws -> [Person] { try select("ORDER BY id") }
    func readFiltered() throws -> [Person] { try select("WHERE age BETWEEN 30 AND 39 ORDER BY id") }
    func streamAll(_ body: (Person) throws -> Void) throws { try stream(body) }

    func ingest(json: Data) throws -> Int {
        guard let rows = try JSONSerialization.jsonObject(with: json) as? [[String: Any]] else {
            throw Failure(description: "not a JSON array of objects")
        }
        func number(_ row: [String: Any], _ key: String) -> NSNumber { row[key] as? NSNumber ?? 0 }
        let people = rows.map { row in
            Person(
                id: number(row, "id").int64Value,
                firstName: row["firstName"] as? String ?? "",
                lastName: row["lastName"] as? String ?? "",
                email: row["email"] as? String ?? "",
                age: number(row, "age").intValue,
                height: number(row, "height").doubleValue,
                score: number(row, "score").doubleValue,
                isActive: number(row, "isActive").boolValue,
                createdAt: Date(timeIntervalSince1970: number(row, "createdAt").doubleValue),
                avatar: Data(base64Encoded: row["avatar"] as? String ?? "") ?? Data()
            )
        }
        try copy(people, avatarAsText: true)
        return people.count
    }
}
