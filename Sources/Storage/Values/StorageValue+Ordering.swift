extension StorageValue {
    /// The rank of the storage class in SQLite's sort order.
    private var classRank: Int {
        switch self {
        case .null: return 0
        case .integer, .real: return 1
        case .text: return 2
        case .blob: return 3
        }
    }

    /// Compares two values with SQLite's rules (BINARY collation): `null` < numbers < text < blob.
    ///
    /// - Parameters:
    ///   - lhs: a value.
    ///   - rhs: another value.
    /// - Returns: a negative number, zero or a positive number, like `memcmp`.
    public static func compare(_ lhs: StorageValue, _ rhs: StorageValue) -> Int {
        let lhsRank = lhs.classRank
        let rhsRank = rhs.classRank
        if lhsRank != rhsRank { return lhsRank < rhsRank ? -1 : 1 }
        switch (lhs, rhs) {
        case (.null, .null):
            return 0
        case (.integer(let a), .integer(let b)):
            return a == b ? 0 : (a < b ? -1 : 1)
        case (.real(let a), .real(let b)):
            return a == b ? 0 : (a < b ? -1 : 1)
        case (.integer(let a), .real(let b)):
            return -compareReal(b, withInteger: a)
        case (.real(let a), .integer(let b)):
            return compareReal(a, withInteger: b)
        case (.text(let a), .text(let b)):
            return compareBytes(a.utf8, b.utf8)
        case (.blob(let a), .blob(let b)):
            return compareBytes(a, b)
        default:
            return 0
        }
    }

    /// Compares a real with an integer exactly, as SQLite does (no rounding of large integers).
    private static func compareReal(_ real: Double, withInteger integer: Int64) -> Int {
        if real.isNaN { return -1 }
        if real < -9_223_372_036_854_775_808.0 { return -1 }
        if real >= 9_223_372_036_854_775_808.0 { return 1 }
        let truncated = Int64(real.rounded(.towardZero))
        if truncated != integer { return truncated < integer ? -1 : 1 }
        let fraction = real - real.rounded(.towardZero)
        return fraction == 0 ? 0 : (fraction < 0 ? -1 : 1)
    }

    private static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?) where x != y: return x < y ? -1 : 1
            default: continue
            }
        }
    }
}
