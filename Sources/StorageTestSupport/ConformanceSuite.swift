import Foundation
import Storage
import Testing

/// One behaviour every backend must show, checked through `ObjectStore`.
///
/// A check is synchronous (in ``ConformanceSuite/checks``: it may block its thread) or
/// asynchronous (in ``ConformanceSuite/asyncChecks``: it awaits the store's async API and change
/// streams, and runs on Swift's cooperative pool). `await run(_:)` runs either kind, a
/// synchronous one on a thread of its own.
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// What the check proves.
    public let name: String
    let body: Body

    enum Body: Sendable {
        case sync(@Sendable (BackendFixture, URL) throws -> Void)
        case async(@Sendable (BackendFixture, URL) async throws -> Void)
    }

    /// The check's name, as test reports show it.
    public var description: String { name }

    /// Whether the check is asynchronous (one of ``ConformanceSuite/asyncChecks``), to be run
    /// with `await run(_:)`.
    public var isAsync: Bool {
        if case .async = body { return true }
        return false
    }

    /// Runs a synchronous check against `fixture` in a fresh folder. An asynchronous check is
    /// not run: it is recorded as an issue (run it with `await`).
    /// - Parameter fixture: the backend under test.
    /// - Throws: what the check throws: a failed expectation is recorded with Swift Testing, and an
    ///   unexpected `StorageError` is rethrown.
    public func run(_ fixture: BackendFixture) throws {
        guard case .sync(let body) = body else {
            Issue.record("\(name) is an asynchronous check: run it with `try await check.run(fixture)`")
            return
        }
        try TemporaryDirectory.with("conformance") { directory in
            try body(fixture, directory)
        }
    }

    /// Runs the check, synchronous or asynchronous, against `fixture` in a fresh folder.
    ///
    /// A synchronous check runs off Swift's cooperative pool, on a thread of its own (as many at
    /// once as the machine has cores; the others wait suspended, holding no thread): its body
    /// blocks, and some checks wait for tasks they start, which a pool whose every thread is
    /// blocked could never run. So one parameterized test can run ``ConformanceSuite/allChecks``.
    /// - Parameter fixture: the backend under test.
    /// - Throws: what the check throws: a failed expectation is recorded with Swift Testing, and an
    ///   unexpected `StorageError` is rethrown.
    public func run(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("conformance")
        defer { directory.remove() }
        switch body {
        case .sync(let body):
            await DedicatedThreadsTrait.slots.acquire()
            defer { DedicatedThreadsTrait.slots.release() }
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
                try await withTaskExecutorPreference(DedicatedThreadsExecutor.shared) {
                    try body(fixture, directory.url)
                }
            } else {
                try body(fixture, directory.url)
            }
        case .async(let body): try await body(fixture, directory.url)
        }
    }
}

/// The shared conformance suite (fluent-kit's `FluentBenchmarker` idea): written once, run by a
/// parameterized test over every backend.
///
/// The synchronous checks block their threads (threads of their own, child work on
/// `DispatchQueue`s), the asynchronous ones await. One parameterized test runs them all
/// (`await run(_:)` puts a synchronous check on a thread of its own):
///
/// ```swift
/// @Test(arguments: fixtures, ConformanceSuite.allChecks)
/// func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
///     try await check.run(fixture)
/// }
/// ```
public enum ConformanceSuite {
    /// Every synchronous check.
    public static let checks: [ConformanceCheck] =
        roundTripChecks + queryChecks + inListChecks + typedComparisonChecks + transactionChecks + dictionaryChecks
        + hostileInputChecks + concurrencyChecks + keyChecks + settingsChecks + exactValueChecks + typeChangeChecks
        + inferenceChecks + naturalKeyChecks + columnNameChecks + typedReadChecks + writePlanChecks
        + randomChecks + deepPredicateChecks + twinNameChecks + csvImportChecks + fixtureDataChecks
        + updateWhereChecks + aggregateChecks + nestedFieldChecks + jsonFileChecks + relationChecks + migrationChecks
        + migrationReferenceChecks + searchChecks

    /// Every asynchronous check: the store's async API, streams, closing, change observation and
    /// typed settings.
    public static let asyncChecks: [ConformanceCheck] =
        storeAPIAsyncChecks + csvImportAsyncChecks + observationAsyncChecks + settingsTierAsyncChecks
        + untypedAsyncAsyncChecks + updateWhereAsyncChecks + liveResultsAsyncChecks + aggregateAsyncChecks
        + nestedFieldAsyncChecks + jsonFileAsyncChecks + relationAsyncChecks + migrationAsyncChecks + searchAsyncChecks

    /// Every check, synchronous and asynchronous: ``checks`` then ``asyncChecks``.
    public static var allChecks: [ConformanceCheck] { checks + asyncChecks }

    static func check(
        _ name: String,
        _ body: @escaping @Sendable (BackendFixture, URL) throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck(name: name, body: .sync(body))
    }

    static func asyncCheck(
        _ name: String,
        _ body: @escaping @Sendable (BackendFixture, URL) async throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck(name: name, body: .async(body))
    }

    /// Expects `body` to throw a `StorageError` with `code`, and returns it (`expectStorageError`).
    @discardableResult
    static func expectError(
        _ code: StorageError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) -> StorageError? {
        expectStorageError(code, sourceLocation: sourceLocation, body)
    }
}
