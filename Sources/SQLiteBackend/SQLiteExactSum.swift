internal import CSQLite
import Storage

/// `storage_exact_sum(x)`, an aggregate function of every connection: the exact sum of a real
/// column's values, rounded once, so that SQLite's `GROUP BY` answers a real sum or average as the
/// one-pass computation does (SQLite's own `sum` rounds at every addition, in scan order).
///
/// Its state lives in SQLite's aggregate context, which SQLite zeroes, sizes and frees, so a
/// statement reset half-way leaks nothing: the count, a flag for infinities of each sign, the
/// number of partials, and up to `capacity` non-overlapping partials (Shewchuk's algorithm, as
/// `ExactSum` keeps them). Partials of doubles that do not overlap are at most about 40 (the
/// exponent range over 53 bits); a sum that would need more, or that leaves the finite reals, is
/// answered with an error the aggregate reads as "left to the one-pass computation".
enum SQLiteExactSum {
    static let name = "storage_exact_sum"
    static let capacity = 64
    static let declined = "storage_exact_sum: left to the one-pass computation"

    /// The aggregate context: header, then the partials.
    private struct Header {
        var partials: Int
        var positiveInfinity: Bool
        var negativeInfinity: Bool
        var failed: Bool
    }

    private static var contextSize: Int32 {
        Int32(MemoryLayout<Header>.stride + capacity * MemoryLayout<Double>.stride)
    }

    /// Registers the function on `handle`.
    static func register(on handle: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            handle,
            name,
            1,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC,
            nil,
            nil,
            { context, _, arguments in SQLiteExactSum.step(context, arguments.flatMap { $0[0] }) },
            { context in SQLiteExactSum.finish(context) },
            nil
        )
    }

    private static func state(
        _ context: OpaquePointer?
    ) -> (UnsafeMutablePointer<Header>, UnsafeMutablePointer<Double>)? {
        guard let raw = sqlite3_aggregate_context(context, contextSize) else { return nil }
        let header = raw.assumingMemoryBound(to: Header.self)
        let partials = (raw + MemoryLayout<Header>.stride).assumingMemoryBound(to: Double.self)
        return (header, partials)
    }

    private static func step(_ context: OpaquePointer?, _ argument: OpaquePointer?) {
        guard sqlite3_value_type(argument) != SQLITE_NULL else { return }
        guard let (header, partials) = state(context) else {
            sqlite3_result_error_nomem(context)
            return
        }
        guard sqlite3_value_type(argument) == SQLITE_FLOAT else {
            // Only real columns are summed here; anything else is the one-pass computation's.
            header.pointee.failed = true
            return
        }
        let value = sqlite3_value_double(argument)
        if value == .infinity {
            header.pointee.positiveInfinity = true
            return
        }
        if value == -.infinity {
            header.pointee.negativeInfinity = true
            return
        }
        let step = ExactSum.addPartial(
            value,
            to: UnsafeMutableBufferPointer(start: partials, count: header.pointee.partials)
        )
        var kept = step.kept
        let x = step.high
        if !x.isFinite || (x != 0 && kept == capacity) {
            header.pointee.failed = true
            header.pointee.partials = kept
            return
        }
        if x != 0 {
            partials[kept] = x
            kept += 1
        }
        header.pointee.partials = kept
    }

    private static func finish(_ context: OpaquePointer?) {
        // No row reached the step: a sum of no values is null.
        guard let raw = sqlite3_aggregate_context(context, 0) else {
            sqlite3_result_null(context)
            return
        }
        let header = raw.assumingMemoryBound(to: Header.self)
        let partials = (raw + MemoryLayout<Header>.stride).assumingMemoryBound(to: Double.self)
        if header.pointee.failed {
            sqlite3_result_error(context, declined, -1)
            return
        }
        var reals = Array(UnsafeBufferPointer(start: partials, count: header.pointee.partials))
        if header.pointee.positiveInfinity { reals.append(.infinity) }
        if header.pointee.negativeInfinity { reals.append(-.infinity) }
        let sum = ExactSum(integers: 0, reals: reals, hasReal: true)
        switch try? sum.value(column: "") {
        case .real(let number)?: sqlite3_result_double(context, number)
        case .null?: sqlite3_result_null(context)
        default: sqlite3_result_error(context, declined, -1)
        }
    }
}
