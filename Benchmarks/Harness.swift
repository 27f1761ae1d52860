import Foundation

/// Shared timing: runs a case several times after a warm-up and keeps the median, and prints
/// each figure beside its baseline measured in the same run.
struct Harness {
    var count: Int
    var repetitions: Int
    var results: [Result] = []

    struct Result {
        var backend: String
        var operation: String
        var rowsPerSecond: Double
        var baseline: String
        var baselineRowsPerSecond: Double
        var ratio: Double { rowsPerSecond / baselineRowsPerSecond }
    }

    /// The median duration of `repetitions` runs of `body`; `setUp` runs before each, untimed.
    func measure(setUp: () throws -> Void = {}, run body: () throws -> Void) rethrows -> Duration {
        var durations: [Duration] = []
        for _ in 0..<repetitions {
            try setUp()
            let clock = ContinuousClock()
            let start = clock.now
            try body()
            durations.append(clock.now - start)
        }
        return durations.sorted()[durations.count / 2]
    }

    func rate(_ rows: Int, _ duration: Duration) -> Double {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return Double(rows) / max(seconds, 1e-9)
    }

    mutating func record(
        backend: String,
        operation: String,
        rows: Int,
        ours: Duration,
        baseline: String,
        baselineTime: Duration
    ) {
        let result = Result(
            backend: backend,
            operation: operation,
            rowsPerSecond: rate(rows, ours),
            baseline: baseline,
            baselineRowsPerSecond: rate(rows, baselineTime)
        )
        results.append(result)
        progress(
            "  \(operation): \(Self.format(result.rowsPerSecond)) rows/s vs \(Self.format(result.baselineRowsPerSecond))"
        )
    }

    func printTable() {
        let header = ["backend", "operation", "rows/s", "baseline", "baseline rows/s", "ratio"]
        var rows = [header]
        for result in results {
            rows.append([
                result.backend, result.operation, Self.format(result.rowsPerSecond), result.baseline,
                Self.format(result.baselineRowsPerSecond), String(format: "%.2f", result.ratio),
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (index, row) in rows.enumerated() {
            print(
                row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                    .joined(separator: "  ")
            )
            if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
    }

    static func format(_ rate: Double) -> String {
        let rounded = Int(rate.rounded())
        var digits = Array(String(rounded))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        return String(digits)
    }
}

/// Progress goes to stderr, so stdout holds only the results.
func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
