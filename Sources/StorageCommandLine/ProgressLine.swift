import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The progress of long work on standard error: a line redrawn in place when standard error is
/// a terminal (records, records per second, and the percentage and time left when the total is
/// known), nothing until the summary otherwise.
final class ProgressLine {
    private let isTerminal: Bool
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant?
    private var drawn = false
    /// The least time between two redraws.
    private let interval = Duration.milliseconds(100)

    /// A line drawn when standard error is a terminal, unless `drawn` is false (an export
    /// writing its records to the same terminal: a line drawn among them would break them).
    init(drawn: Bool = true) {
        isTerminal = drawn && isatty(STDERR_FILENO) != 0
        start = clock.now
    }

    /// A line still drawn (work that failed) is cleared, so that the error is written on a
    /// line of its own.
    deinit {
        if drawn { Self.writeError("\r\u{1B}[2K") }
    }

    /// Redraws the line (at most every 100 ms) with `records` done out of `total`.
    func update(_ label: String, records: Int, total: Int?) {
        guard isTerminal else { return }
        let now = clock.now
        if let lastDraw, now - lastDraw < interval { return }
        lastDraw = now
        let elapsed = Self.seconds(now - start)
        let rate = elapsed > 0 ? Double(records) / elapsed : 0
        var line = "\(label): \(Self.counted(records, "record")), \(Self.grouped(Int(rate))) records/s"
        if let total, total > 0 {
            let fraction = min(1, Double(records) / Double(total))
            line += ", \(Int(fraction * 100))%"
            if rate > 0 && records < total {
                line += ", " + Self.clockTime(Double(total - records) / rate) + " left"
            }
        }
        Self.writeError("\r\u{1B}[2K" + line)
        drawn = true
    }

    /// Clears the line and writes `summary` (on its own line) to standard error.
    func finish(_ summary: String?) {
        if drawn { Self.writeError("\r\u{1B}[2K") }
        drawn = false
        if let summary { Self.writeError(summary + "\n") }
    }

    /// The time since the line was made, in seconds.
    var elapsed: Double { Self.seconds(clock.now - start) }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func grouped(_ number: Int) -> String {
        let digits = String(number)
        var result = ""
        for (index, digit) in digits.reversed().enumerated() {
            if index > 0 && index % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return String(result.reversed())
    }

    /// `count` (grouped) and `noun`, plural unless `count` is 1: "1 record", "20,000 records".
    static func counted(_ count: Int, _ noun: String) -> String {
        grouped(count) + " " + (count == 1 ? noun : noun + "s")
    }

    static func clockTime(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
