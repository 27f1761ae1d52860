import Foundation
import Storage
import Testing

/// One behaviour every backend must show, checked through `ObjectStore`.
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// What the check proves.
    public let name: String
    let body: @Sendable (BackendFixture, URL) throws -> Void

    /// The check's name, as test reports show it.
    public var description: String { name }

    /// Runs the check against `fixture` in a fresh folder.
    /// - Parameter fixture: the backend under test.
    /// - Throws: what the check throws: a failed expectation is recorded with Swift Testing, and an
    ///   unexpected `StorageError` is rethrown.
    public func run(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with("conformance") { directory in
            try body(fixture, directory)
        }
    }
}

/// The shared conformance suite (fluent-kit's `FluentBenchmarker` idea): written once, run by a
/// parameterized test over every backend.
///
/// ```swift
/// @Test(arguments: fixtures, ConformanceSuite.checks)
/// func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws { try check.run(fixture) }
/// ```
public enum ConformanceSuite {
    /// Every check.
    public static let checks: [ConformanceCheck] =
        roundTripChecks + queryChecks + inListChecks + typedComparisonChecks + transactionChecks + dictionaryChecks
        + hostileInputChecks + concurrencyChecks + keyChecks + settingsChecks + exactValueChecks + typeChangeChecks
        + inferenceChecks + naturalKeyChecks + columnNameChecks + typedReadChecks + writePlanChecks
        + randomChecks + deepPredicateChecks + twinNameChecks

    static func check(
        _ name: String,
        _ body: @escaping @Sendable (BackendFixture, URL) throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck(name: name, body: body)
    }

    /// Expects `body` to throw a `StorageError` with `code`, and returns it.
    @discardableResult
    static func expectError(
        _ code: StorageError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) -> StorageError? {
        do {
            try body()
            Issue.record("expected StorageError.\(code), but nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as StorageError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("expected StorageError.\(code), got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
