package import Storage
package import Testing

/// Expects `body` to throw a `StorageError` with `code`, and returns it: the one check the tests
/// of every target make of an error's code.
/// - Parameters:
///   - code: the code expected.
///   - sourceLocation: where a failure is reported.
///   - body: the work that must fail.
/// - Returns: the error, or `nil` when `body` threw something else or nothing.
@discardableResult
package func expectStorageError(
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
