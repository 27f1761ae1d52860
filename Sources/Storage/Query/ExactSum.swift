/// The exact arithmetic behind sums and averages, shared by the one-pass computation and the
/// backends that compute aggregates in their engine, so that every engine rounds alike.
///
/// Integers are added exactly (in 128 bits: 2^63 values of at most 2^63 cannot leave it). Reals
/// are added exactly too, as a list of non-overlapping partial sums (Shewchuk's algorithm, as
/// Python's `math.fsum`), and rounded once at the end: the result does not depend on the order
/// the records were read in, which no two engines share.
package struct ExactSum: Sendable {
    /// The exact sum of the integers added.
    package private(set) var integers: Int128 = 0
    /// The finite reals added, as non-overlapping partials in increasing magnitude.
    private var partials: [Double] = []
    /// Whether any real was added (the sum is then a real).
    package private(set) var hasReal = false
    private var positiveInfinity = false
    private var negativeInfinity = false
    /// Set when finite reals summed past the largest finite real.
    private var overflowed = false

    package init() {}

    /// A sum another engine kept: its exact integer sum, and its reals (partials or values,
    /// added exactly), with whether any real was added at all.
    /// - Parameters:
    ///   - integers: the exact sum of the integers.
    ///   - reals: reals whose exact sum is the rest; infinities among them count as infinities.
    ///   - hasReal: whether the sum is a real.
    package init(integers: Int128, reals: some Sequence<Double>, hasReal: Bool) {
        self.integers = integers
        for real in reals { add(real) }
        self.hasReal = hasReal
    }

    package mutating func add(_ value: Int64) {
        integers += Int128(value)
    }

    package mutating func add(_ value: Double) {
        hasReal = true
        guard value.isFinite else {
            if value == .infinity {
                positiveInfinity = true
            } else if value == -.infinity {
                negativeInfinity = true
            }
            return
        }
        addPartial(value)
    }

    /// Adds a finite real to the partials exactly.
    private mutating func addPartial(_ value: Double) {
        let (kept, high) = partials.withUnsafeMutableBufferPointer { Self.addPartial(value, to: $0) }
        partials.removeSubrange(kept...)
        if !high.isFinite {
            overflowed = true
            return
        }
        if high != 0 { partials.append(high) }
    }

    /// One step of Shewchuk's algorithm, for this type's partials and for a backend that keeps
    /// them in its engine's memory (SQLite's `storage_exact_sum`): adds finite `value` to the
    /// non-overlapping `partials` in place, each addition's rounding error kept as a partial of
    /// its own.
    /// - Parameters:
    ///   - value: a finite real.
    ///   - partials: the partials, in increasing magnitude.
    /// - Returns: how many partials the first ones of `partials` now are, and the new largest
    ///   partial, not yet stored: the caller stores it when it is finite and not zero (not
    ///   finite: the sum left the finite reals).
    package static func addPartial(
        _ value: Double,
        to partials: UnsafeMutableBufferPointer<Double>
    ) -> (kept: Int, high: Double) {
        var x = value
        var kept = 0
        for index in partials.indices {
            var y = partials[index]
            if abs(x) < abs(y) { swap(&x, &y) }
            let high = x + y
            let low = y - (high - x)
            if low != 0 {
                partials[kept] = low
                kept += 1
            }
            x = high
        }
        return (kept, x)
    }

    /// The sum: `.null` for no values (the caller knows), an exact integer, or the real nearest
    /// the exact sum.
    /// - Parameter column: the column summed, named in an error.
    /// - Returns: `.integer` when no real was added, `.real` otherwise (`.null` for a sum of
    ///   both infinities, as SQLite answers a NaN).
    /// - Throws: ``StorageError`` with `.valueOutOfRange` for an integer sum beyond `Int64`, or a
    ///   real sum beyond the finite reals.
    package func value(column: String) throws -> StorageValue {
        guard hasReal else { return try Self.integer(integers, column: column) }
        if positiveInfinity && negativeInfinity { return .null }
        if positiveInfinity { return .real(.infinity) }
        if negativeInfinity { return .real(-.infinity) }
        let total = try rounded(column: column)
        return .real(total == 0 ? 0 : total)
    }

    /// An exact sum of integers as the integer it is.
    /// - Parameters:
    ///   - total: the exact sum.
    ///   - column: the column summed, named in an error.
    /// - Returns: `.integer(total)`.
    /// - Throws: ``StorageError`` with `.valueOutOfRange` when `total` is beyond `Int64`.
    package static func integer(_ total: Int128, column: String) throws -> StorageValue {
        guard let exact = Int64(exactly: total) else {
            throw StorageError(
                .valueOutOfRange,
                "the sum of \(Identifier.quoted(column)) is \(total), beyond the 64-bit integers",
                column: column
            )
        }
        return .integer(exact)
    }

    /// The average of `count` values whose sum this is: the exact integer sum divided by the
    /// count and rounded once, or with any real, the rounded sum divided by the count.
    /// - Parameters:
    ///   - count: how many values were added; more than zero.
    ///   - column: the column averaged, named in an error.
    /// - Returns: the average, a real (`.null` for a sum of both infinities).
    /// - Throws: ``StorageError`` with `.valueOutOfRange` for a real sum beyond the finite reals.
    package func average(count: Int, column: String) throws -> StorageValue {
        guard hasReal else { return .real(Self.quotient(integers, count)) }
        switch try value(column: column) {
        case .real(let total):
            let mean = total / Double(count)
            return .real(mean == 0 ? 0 : mean)
        default:
            return .null
        }
    }

    /// The partials plus the integers, rounded once to the nearest real (ties to even), as
    /// `math.fsum` rounds.
    private func rounded(column: String) throws -> Double {
        var exact = self
        // The integer sum, added as chunks of 32 bits, each a real exactly.
        let magnitude = integers.magnitude
        let sign: Double = integers < 0 ? -1 : 1
        for chunk in 0..<4 {
            let bits = (magnitude >> (32 * chunk)) & 0xFFFF_FFFF
            if bits != 0 {
                exact.addPartial(
                    sign * Double(UInt64(bits)) * Double(sign: .plus, exponent: 32 * chunk, significand: 1)
                )
            }
        }
        if exact.overflowed {
            throw StorageError(
                .valueOutOfRange,
                "the sum of \(Identifier.quoted(column)) is beyond the largest real",
                column: column
            )
        }
        let partials = exact.partials
        var count = partials.count
        guard count > 0 else { return 0 }
        count -= 1
        var high = partials[count]
        var low = 0.0
        while count > 0 {
            let x = high
            count -= 1
            let y = partials[count]
            high = x + y
            low = y - (high - x)
            if low != 0 { break }
        }
        // Round half to even across the partials that are left: when the error so far points
        // the same way as the next partial, the true sum is past the halfway point.
        if count > 0, (low < 0 && partials[count - 1] < 0) || (low > 0 && partials[count - 1] > 0) {
            let y = low * 2
            let x = high + y
            if y == x - high { high = x }
        }
        return high
    }

    /// `numerator / denominator` rounded once to the nearest real, ties to even.
    /// - Parameters:
    ///   - numerator: an exact sum of integers.
    ///   - denominator: a count, more than zero.
    /// - Returns: the real nearest the quotient.
    package static func quotient(_ numerator: Int128, _ denominator: Int) -> Double {
        guard numerator != 0 else { return 0 }
        let divisor = UInt128(denominator)
        var quotient = numerator.magnitude / divisor
        var remainder = numerator.magnitude % divisor
        // Long division until the quotient has 55 bits: two more than a real keeps, so that
        // with the remainder as a sticky bit the conversion below rounds as the exact quotient
        // would.
        var shift = 0
        while quotient < (1 << 54) {
            remainder <<= 1
            quotient <<= 1
            if remainder >= divisor {
                quotient |= 1
                remainder -= divisor
            }
            shift += 1
        }
        let scaled = Double((quotient << 1) | (remainder == 0 ? 0 : 1))
        let magnitude = Double(sign: .plus, exponent: -(shift + 1), significand: scaled)
        return numerator < 0 ? -magnitude : magnitude
    }
}
