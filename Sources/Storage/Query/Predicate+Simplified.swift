extension StoragePredicate {
    /// The deepest nesting of `&&`, `||` and `!` a query may have once simplified (see
    /// ``simplified()``): 1,000 levels. Every engine answers a query up to this depth and refuses
    /// a deeper one with the same ``StorageError/Code/invalidQuery`` before doing any work, so a
    /// query never answers on one engine and fails on another.
    ///
    /// Depth counts operators, not terms: `Column("a") == 1` is 0 deep, `!(Column("a") == 1)` 1,
    /// and `a && (b || (c && d))` 3. A chain of `&&` (or of `||`) is one level however long it is.
    public static let maximumDepth = 1_000

    /// The same predicate, in the form the store hands to backends: `!` pushed down to the terms
    /// (De Morgan's laws, `!!p` is `p`; both hold in SQL's three-valued logic), nested chains of
    /// the same operator merged into one chain, and constants folded (`p && true` is `p`,
    /// `p && false` is `false` even where `p` is unknown). Chains come back balanced (see
    /// ``all(_:)``). Walked without recursion, so a predicate of any depth is safe to pass.
    ///
    /// ```swift
    /// let deep = (0..<6_000).reduce(Column("a") == 1) { p, _ in !p }
    /// try deep.simplified()   // Column("a") == 1: an even number of negations
    /// ```
    /// - Returns: the simplified predicate, at most ``maximumDepth`` deep.
    /// - Throws: `StorageError(.invalidQuery)` naming the depth reached and the limit, when the
    ///   simplified predicate would be deeper than ``maximumDepth``.
    public func simplified() throws -> StoragePredicate {
        var steps: [SimplifyStep] = [.visit(self, negated: false)]
        var results: [Simplified] = []
        while let step = steps.popLast() {
            switch step {
            case .visit(var node, var negated):
                while case .not(let operand) = node {
                    node = operand
                    negated.toggle()
                }
                guard let conjunction = node.conjunction(negated: negated) else {
                    results.append(Simplified(term: node, negated: negated))
                    continue
                }
                let operands = node.operands(conjunction: conjunction, negated: negated)
                steps.append(.combine(conjunction: conjunction, count: operands.count))
                for operand in operands.reversed() { steps.append(.visit(operand.node, negated: operand.negated)) }
            case .combine(let conjunction, let count):
                let combined = Simplified(conjunction: conjunction, results.suffix(count))
                results.removeLast(count)
                if combined.depth > Self.maximumDepth {
                    throw StorageError(
                        .invalidQuery,
                        "the query is nested more than \(Self.maximumDepth) levels deep once simplified (each &&, ||"
                            + " or ! within another counts one level); the limit is StoragePredicate.maximumDepth,"
                            + " \(Self.maximumDepth)"
                    )
                }
                results.append(combined)
            }
        }
        return results[0].predicate
    }

    /// Whether this node, under `negated`, is a chain of ANDs (`true`), of ORs (`false`), or not
    /// a chain (`nil`: a term). `!(a || b)` is a chain of ANDs.
    private func conjunction(negated: Bool) -> Bool? {
        switch self {
        case .and: return !negated
        case .or: return negated
        default: return nil
        }
    }

    /// The operands of the chain this node starts, with their negation: nested chains of the
    /// same operator (after De Morgan) are walked through, so `a && !(b || c)` has three.
    private func operands(conjunction: Bool, negated: Bool) -> [(node: StoragePredicate, negated: Bool)] {
        var operands: [(node: StoragePredicate, negated: Bool)] = []
        var pending = [(node: self, negated: negated)]
        while var (node, negated) = pending.popLast() {
            while case .not(let operand) = node {
                node = operand
                negated.toggle()
            }
            switch node {
            case .and(let lhs, let rhs) where !negated == conjunction,
                .or(let lhs, let rhs) where negated == conjunction:
                pending.append((rhs, negated))
                pending.append((lhs, negated))
            default:
                operands.append((node, negated))
            }
        }
        return operands
    }
}

/// One step of `simplified()`'s explicit stack: visit a node (with the negation it is under),
/// or combine the last results into a chain.
private enum SimplifyStep {
    case visit(StoragePredicate, negated: Bool)
    case combine(conjunction: Bool, count: Int)
}

/// A part of a predicate once simplified: a constant, a term (negated or not), or a chain whose
/// operands are kept apart so that a parent chain of the same operator can take them in.
private struct Simplified {
    enum Shape {
        case constant(Bool)
        case term
        case chain(conjunction: Bool, operands: [StoragePredicate])
    }

    let shape: Shape
    /// The predicate this part stands for.
    let predicate: StoragePredicate
    /// Its depth as ``StoragePredicate/maximumDepth`` counts it.
    let depth: Int

    /// A term under `negated`: a negated constant is the other constant.
    init(term: StoragePredicate, negated: Bool) {
        if case .constant(let value) = term {
            self.init(constant: value != negated)
        } else {
            self.init(shape: .term, predicate: negated ? .not(term) : term, depth: negated ? 1 : 0)
        }
    }

    /// The chain of `parts`: constants folded, chains of the same operator taken in.
    init(conjunction: Bool, _ parts: ArraySlice<Simplified>) {
        var operands: [StoragePredicate] = []
        var deepest = 0
        for part in parts {
            switch part.shape {
            case .constant(let value):
                // `true` is AND's identity and wins an OR; `false` the reverse.
                if value == conjunction { continue }
                self.init(constant: value)
                return
            case .chain(conjunction, let inner):
                operands.append(contentsOf: inner)
                deepest = max(deepest, part.depth - 1)
            default:
                operands.append(part.predicate)
                deepest = max(deepest, part.depth)
            }
        }
        switch operands.count {
        case 0:
            self.init(constant: conjunction)
        case 1:
            // A single operand left stands alone; it is the one part that was not a constant.
            self = parts.first { if case .constant = $0.shape { false } else { true } }!
        default:
            self.init(
                shape: .chain(conjunction: conjunction, operands: operands),
                predicate: conjunction ? .all(operands) : .any(operands),
                depth: deepest + 1
            )
        }
    }

    private init(constant value: Bool) {
        self.init(shape: .constant(value), predicate: .constant(value), depth: 0)
    }

    private init(shape: Shape, predicate: StoragePredicate, depth: Int) {
        self.shape = shape
        self.predicate = predicate
        self.depth = depth
    }
}
