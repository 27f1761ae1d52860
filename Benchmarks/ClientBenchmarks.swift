import CPostgreSQL
import Foundation
import PostgreSQLBackend
import Storage

// `--clients 1,2,4,8,16,32`: many clients on one PostgreSQL server, each a process of its own with
// its own store (or its own libpq connection, the baseline), running one workload for a few
// seconds at once: look-ups by key, single-record commits, and read-modify-write transactions on a
// shared set of 16 counters. Throughput, p50 and p99 latency, conflicts and errors, beside raw
// libpq at the same concurrency; with `--pooler-url` the same again through a transaction pooler
// (PgBouncer, `scripts/pgbouncer.sh start DIR`). `--plot PATH` writes a chart of the throughput.

/// A record of the look-up and single-commit workloads.
struct ClientItem: Codable {
    var id: Int64
    var name: String
    var value: Int64
}

/// One of the 16 shared counters of the read-modify-write workload.
struct ClientCounter: Codable {
    var id: Int64
    var value: Int64
}

/// What one client process measured.
struct ClientReport: Codable {
    var operations: Int
    /// Each operation's latency, in microseconds.
    var latencies: [Double]
    /// Transactions run again after a serialization failure (the baseline's own count; the
    /// store's retries are inside it and not seen here).
    var retries: Int
    /// Errors, by description (`.busy` at the limit counts here too).
    var errors: [String]
}

/// One figure of the `--clients` tables.
struct ClientPoint: Codable {
    var path: String
    var workload: String
    var kind: String
    var clients: Int
    var throughput: Double
    var p50: Double
    var p99: Double
    var retries: Int
    var errors: Int
}

enum ClientWorkload: String, CaseIterable {
    case lookup, singleCommit, readModifyWrite
}

let clientItems: Int64 = 10_000
let clientCounters: Int64 = 16
let clientSchema = "bench_clients"

// MARK: The parent

func runClientBenchmarks(
    clients: [Int],
    seconds: Double,
    poolerURL: String?,
    jsonPath: String?,
    plotPath: String?
)
    throws
{
    let url = try RawPostgreSQL.url()
    try prepareClientTables(url: url)
    var points: [ClientPoint] = []
    let paths = [("direct", url)] + (poolerURL.map { [("pgbouncer", $0)] } ?? [])
    for (path, pathURL) in paths {
        for workload in ClientWorkload.allCases {
            for count in clients {
                for kind in ["ours", "raw"] {
                    let point = try measureClients(
                        count,
                        kind: kind,
                        workload: workload,
                        url: pathURL,
                        pooled: path == "pgbouncer",
                        seconds: seconds,
                        path: path
                    )
                    progress(
                        "\(path) \(workload.rawValue) \(kind) \(count) clients: \(Harness.format(point.throughput))/s,"
                            + " p50 \(Int(point.p50)) µs, p99 \(Int(point.p99)) µs, \(point.retries) retries,"
                            + " \(point.errors) errors"
                    )
                    points.append(point)
                }
            }
        }
    }
    printClientTables(points, clients: clients)
    if let jsonPath {
        try JSONEncoder().encode(points).write(to: URL(fileURLWithPath: jsonPath))
        progress("wrote \(jsonPath)")
    }
    if let plotPath {
        try clientChart(points, clients: clients).write(toFile: plotPath, atomically: true, encoding: .utf8)
        progress("wrote \(plotPath)")
    }
}

/// The tables of both sides (schemas `bench_clients` for the baseline, `bench_clients_ours` for
/// the store), made afresh: 10,000 items and 16 counters each.
func prepareClientTables(url: String) throws {
    let raw = try ClientConnection(url: url, pooled: false)
    try raw.execute(
        "DROP SCHEMA IF EXISTS \(clientSchema) CASCADE; DROP SCHEMA IF EXISTS \(clientSchema)_ours CASCADE;"
            + " CREATE SCHEMA \(clientSchema);"
            + " CREATE TABLE \(clientSchema).item (id bigint PRIMARY KEY, name text COLLATE \"C\", value bigint);"
            + " CREATE TABLE \(clientSchema).counter (id bigint PRIMARY KEY, value bigint);"
            + " INSERT INTO \(clientSchema).item SELECT i, 'item ' || i, i FROM generate_series(1, \(clientItems)) i;"
            + " INSERT INTO \(clientSchema).counter SELECT i, 0 FROM generate_series(1, \(clientCounters)) i"
    )
    let store = try ObjectStore(
        backend: .postgreSQL(url: url, configuration: .init(schema: clientSchema + "_ours", poolSize: 1))
    )
    try store.transaction { tx in
        for id in 1...clientItems { try tx.save(ClientItem(id: id, name: "item \(id)", value: id)) }
        for id in 1...clientCounters { try tx.save(ClientCounter(id: id, value: 0)) }
    }
    try store.close()
}

/// Runs `count` client processes of `kind` at once and merges their reports.
func measureClients(
    _ count: Int,
    kind: String,
    workload: ClientWorkload,
    url: String,
    pooled: Bool,
    seconds: Double,
    path: String
) throws -> ClientPoint {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("clients-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    // Every client starts at the same moment, once all are up.
    let startAt = Date().timeIntervalSince1970 + 1.0 + Double(count) * 0.05
    let children = try (0..<count).map { client -> (Process, URL) in
        let report = directory.appendingPathComponent("client-\(client).json")
        let child = Process()
        child.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments =
            [
                "--clients-child", kind, workload.rawValue, "--url", url, "--client", String(client),
                "--start-at", String(startAt), "--seconds", String(seconds), "--report", report.path,
            ] + (pooled ? ["--pooled"] : [])
        try child.run()
        return (child, report)
    }
    var reports: [ClientReport] = []
    for (child, report) in children {
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            fail("--clients: a \(kind) client ended with status \(child.terminationStatus)")
        }
        reports.append(try JSONDecoder().decode(ClientReport.self, from: Data(contentsOf: report)))
    }
    let latencies = reports.flatMap(\.latencies).sorted()
    func percentile(_ fraction: Double) -> Double {
        latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
    }
    for error in Set(reports.flatMap(\.errors)).prefix(3) { progress("  error: \(error)") }
    return ClientPoint(
        path: path,
        workload: workload.rawValue,
        kind: kind,
        clients: count,
        throughput: Double(reports.map(\.operations).reduce(0, +)) / seconds,
        p50: percentile(0.5),
        p99: percentile(0.99),
        retries: reports.map(\.retries).reduce(0, +),
        errors: reports.map(\.errors.count).reduce(0, +)
    )
}

func printClientTables(_ points: [ClientPoint], clients: [Int]) {
    for path in ["direct", "pgbouncer"] where points.contains(where: { $0.path == path }) {
        for workload in ClientWorkload.allCases {
            print("\n\(path), \(workload.rawValue)")
            var rows = [
                [
                    "clients", "ours/s", "raw/s", "ratio", "ours p50 µs", "raw p50 µs", "ours p99 µs", "raw p99 µs",
                    "p99 ratio", "raw retries", "ours errors", "raw errors",
                ]
            ]
            for count in clients {
                let matching = points.filter {
                    $0.path == path && $0.workload == workload.rawValue && $0.clients == count
                }
                guard let ours = matching.first(where: { $0.kind == "ours" }),
                    let raw = matching.first(where: { $0.kind == "raw" })
                else { continue }
                rows.append([
                    String(count), Harness.format(ours.throughput), Harness.format(raw.throughput),
                    String(format: "%.2f", ours.throughput / max(raw.throughput, 1e-9)), String(Int(ours.p50)),
                    String(Int(raw.p50)), String(Int(ours.p99)), String(Int(raw.p99)),
                    String(format: "%.2f", ours.p99 / max(raw.p99, 1e-9)), String(raw.retries), String(ours.errors),
                    String(raw.errors),
                ])
            }
            let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                print(
                    "| "
                        + zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                        .joined(separator: " | ") + " |"
                )
            }
        }
    }
}

/// Throughput against clients, one panel per workload; ours solid, raw dashed; direct and
/// through the pooler in two colours.
func clientChart(_ points: [ClientPoint], clients: [Int]) -> String {
    let width = 440.0
    let height = 300.0
    let left = 70.0
    let bottom = 45.0
    let top = 40.0
    let workloads = ClientWorkload.allCases.map(\.rawValue)
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width) * workloads.count)" height="\(Int(height) + 30)" \
        font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>

        """
    let colors = ["direct": "#9467bd", "pgbouncer": "#ff7f0e"]
    var legendX = 10.0
    for (path, color) in colors.sorted(by: { $0.key < $1.key }) {
        for (kind, dash) in [("ObjectStore", ""), ("raw libpq", " stroke-dasharray=\"6 4\"")] {
            svg += "<line x1=\"\(legendX)\" y1=\"15\" x2=\"\(legendX + 30)\" y2=\"15\" stroke=\"\(color)\""
            svg += " stroke-width=\"2\"\(dash)/><text x=\"\(legendX + 36)\" y=\"19\">\(path) \(kind)</text>\n"
            legendX += 170
        }
    }
    let xs = clients.map { log2(Double($0)) }
    let xMin = xs.min() ?? 0
    let xMax = max(xs.max() ?? 1, xMin + 1)
    for (index, workload) in workloads.enumerated() {
        let originX = Double(index) * width
        let originY = 30.0
        let chosen = points.filter { $0.workload == workload }
        let yMax = max(1, chosen.map(\.throughput).max() ?? 1) * 1.1
        func x(_ clients: Int) -> Double {
            originX + left + (log2(Double(clients)) - xMin) / (xMax - xMin) * (width - left - 20)
        }
        func y(_ value: Double) -> Double { originY + height - bottom - value / yMax * (height - bottom - top) }
        svg +=
            "<text x=\"\(originX + width / 2)\" y=\"\(originY + 25)\" text-anchor=\"middle\">\(workload), operations/s</text>\n"
        svg +=
            "<line x1=\"\(originX + left)\" y1=\"\(y(0))\" x2=\"\(originX + width - 20)\" y2=\"\(y(0))\" stroke=\"#333\"/>\n"
        svg +=
            "<line x1=\"\(originX + left)\" y1=\"\(y(0))\" x2=\"\(originX + left)\" y2=\"\(y(yMax))\" stroke=\"#333\"/>\n"
        for count in clients {
            svg += "<text x=\"\(x(count))\" y=\"\(y(0) + 15)\" text-anchor=\"middle\">\(count)</text>\n"
        }
        for step in 0...4 {
            let value = yMax / 1.1 * Double(step) / 4
            svg +=
                "<text x=\"\(originX + left - 5)\" y=\"\(y(value) + 4)\" text-anchor=\"end\">\(Harness.format(value))</text>\n"
        }
        svg +=
            "<text x=\"\(originX + width / 2)\" y=\"\(y(0) + 32)\" text-anchor=\"middle\">clients (processes)</text>\n"
        for (path, color) in colors {
            for (kind, dash) in [("ours", ""), ("raw", " stroke-dasharray=\"6 4\"")] {
                let line = chosen.filter { $0.path == path && $0.kind == kind }.sorted { $0.clients < $1.clients }
                guard !line.isEmpty else { continue }
                let coordinates = line.map { "\(x($0.clients)),\(y($0.throughput))" }.joined(separator: " ")
                svg +=
                    "<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            }
        }
    }
    return svg + "</svg>\n"
}

// MARK: A client process

/// `--clients-child KIND WORKLOAD --url URL --client N --start-at T --seconds S --report PATH
/// [--pooled]`: one client, measured, its report written as JSON.
func runClientChild(_ arguments: [String]) throws -> Never {
    func option(_ name: String) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
    guard arguments.count >= 2, let workload = ClientWorkload(rawValue: arguments[1]), let url = option("--url"),
        let client = option("--client").flatMap(Int64.init), let startAt = option("--start-at").flatMap(Double.init),
        let seconds = option("--seconds").flatMap(Double.init), let reportPath = option("--report")
    else { fail("--clients-child: bad arguments \(arguments)") }
    let pooled = arguments.contains("--pooled")
    let operation: () throws -> Int
    var generator = SystemRandomNumberGenerator()
    // Each client saves items of a range of its own (single commits never conflict), and
    // increments any of the shared counters (read-modify-writes do).
    let ownItems = clientItems + 1 + client * 1_000_000
    var nextItem = ownItems
    if arguments[0] == "ours" {
        let store = try ObjectStore(
            backend: .postgreSQL(
                url: url,
                configuration: .init(
                    schema: clientSchema + "_ours",
                    poolSize: 1,
                    observesOtherProcesses: false,
                    transactionPooling: pooled
                )
            )
        )
        operation = {
            switch workload {
            case .lookup:
                consume(try store.fetch(ClientItem.self, id: Int64.random(in: 1...clientItems, using: &generator)))
            case .singleCommit:
                nextItem += 1
                try store.save(ClientItem(id: nextItem, name: "client", value: nextItem))
            case .readModifyWrite:
                let id = Int64.random(in: 1...clientCounters, using: &generator)
                try store.transaction { tx in
                    let value = try tx.fetch(ClientCounter.self, id: id)?.value ?? 0
                    try tx.save(ClientCounter(id: id, value: value + 1))
                }
            }
            return 0
        }
    } else {
        let raw = try ClientConnection(url: url, pooled: pooled)
        operation = {
            switch workload {
            case .lookup:
                try raw.lookup(Int64.random(in: 1...clientItems, using: &generator))
                return 0
            case .singleCommit:
                nextItem += 1
                try raw.upsert(nextItem)
                return 0
            case .readModifyWrite:
                return try raw.increment(Int64.random(in: 1...clientCounters, using: &generator))
            }
        }
    }
    // A warm-up (statements prepared, caches filled), then the measured run.
    for _ in 0..<20 { _ = try? operation() }
    let wait = startAt - Date().timeIntervalSince1970
    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
    var report = ClientReport(operations: 0, latencies: [], retries: 0, errors: [])
    report.latencies.reserveCapacity(100_000)
    let clock = ContinuousClock()
    let end = clock.now + .milliseconds(Int(seconds * 1000))
    while clock.now < end {
        let began = clock.now
        do {
            report.retries += try operation()
            report.operations += 1
            let elapsed = clock.now - began
            report.latencies.append(
                Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
            )
        } catch {
            report.errors.append("\(error)")
        }
    }
    try JSONEncoder().encode(report).write(to: URL(fileURLWithPath: reportPath))
    exit(0)
}

/// The baseline client: one libpq connection, prepared statements (unnamed behind a transaction
/// pooler), text parameters, binary results; a read-modify-write is `BEGIN ISOLATION LEVEL
/// SERIALIZABLE`, a `SELECT`, an `UPDATE` and `COMMIT`, run again after `40001` or `40P01`.
final class ClientConnection {
    private let connection: OpaquePointer
    private let pooled: Bool
    private var prepared: Set<String> = []

    init(url: String, pooled: Bool) throws {
        guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
            throw RawPostgreSQL.Failure(description: "cannot connect for --clients")
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
        self.pooled = pooled
    }

    deinit { PQfinish(connection) }

    func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw RawPostgreSQL.Failure(description: String(cString: PQerrorMessage(connection)))
        }
    }

    /// Runs `sql` with `parameters` (text), binary results; returns the SQLSTATE of a failure.
    @discardableResult
    private func run(_ name: String, _ sql: String, _ parameters: [String]) throws -> String? {
        let result: OpaquePointer? = parameters.withClientCStrings { values in
            if pooled {
                return PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 1)
            }
            if !prepared.contains(name) {
                PQclear(PQprepare(connection, name, sql, Int32(parameters.count), nil))
                prepared.insert(name)
            }
            return PQexecPrepared(connection, name, Int32(parameters.count), values, nil, nil, 1)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
            if PQntuples(result) > 0 { consume(PQgetlength(result, 0, 0)) }
            return nil
        }
        guard let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) else {
            throw RawPostgreSQL.Failure(description: String(cString: PQerrorMessage(connection)))
        }
        return String(cString: state)
    }

    func lookup(_ id: Int64) throws {
        if let state = try run(
            "lookup",
            "SELECT id, name, value FROM \(clientSchema).item WHERE id = $1::int8",
            [String(id)]
        ) {
            throw RawPostgreSQL.Failure(description: "look-up failed: \(state)")
        }
    }

    func upsert(_ id: Int64) throws {
        if let state = try run(
            "upsert",
            "INSERT INTO \(clientSchema).item (id, name, value) VALUES ($1::int8, $2::text, $1::int8)"
                + " ON CONFLICT (id) DO UPDATE SET name = excluded.name, value = excluded.value",
            [String(id), "client"]
        ) {
            throw RawPostgreSQL.Failure(description: "upsert failed: \(state)")
        }
    }

    /// Increments counter `id`; returns how many times it ran again after a conflict.
    func increment(_ id: Int64) throws -> Int {
        var retries = 0
        while true {
            try execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
            var state = try run(
                "read",
                "SELECT value FROM \(clientSchema).counter WHERE id = $1::int8",
                [String(id)]
            )
            if state == nil {
                state = try run(
                    "write",
                    "UPDATE \(clientSchema).counter SET value = value + 1 WHERE id = $1::int8",
                    [String(id)]
                )
            }
            if state == nil {
                let result = PQexec(connection, "COMMIT")
                defer { PQclear(result) }
                if PQresultStatus(result) == PGRES_COMMAND_OK { return retries }
                state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            } else {
                try execute("ROLLBACK")
            }
            guard state == "40001" || state == "40P01" else {
                throw RawPostgreSQL.Failure(description: "increment failed: \(state ?? "?")")
            }
            retries += 1
            usleep(UInt32.random(in: 0...UInt32(500 << min(retries, 8))))
        }
    }
}

extension Array where Element == String {
    /// The strings as an array of C strings, valid during `body`.
    fileprivate func withClientCStrings<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { UnsafePointer($0) })
    }
}
