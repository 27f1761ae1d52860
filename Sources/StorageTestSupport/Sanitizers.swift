import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which sanitizer runtime this process runs under, for the tests that size their loops by it.
///
/// Under ThreadSanitizer (`swift test --sanitize=thread`) code runs 5 to 20 times slower, and what
/// it checks (a data race between two threads) needs the threads to meet, not many rounds: a test
/// that repeats the same work thousands of times for a statistical property can repeat it fewer
/// times there, as long as the smaller count still breaks the property it covers (each such test
/// says why in a comment).
package enum Sanitizers {
    /// Whether ThreadSanitizer's runtime is linked into this process.
    package static let thread = linked("__tsan_init")

    /// Whether AddressSanitizer's runtime is linked into this process.
    package static let address = linked("__asan_init")

    /// `normal` in a plain build, `sanitized` under ThreadSanitizer.
    /// - Parameters:
    ///   - normal: the count for a plain build.
    ///   - sanitized: the count under ThreadSanitizer.
    /// - Returns: the count for this process.
    package static func count(_ normal: Int, underThreadSanitizer sanitized: Int) -> Int {
        thread ? sanitized : normal
    }

    /// Whether the process (its main program or a library it loaded) defines `symbol`.
    private static func linked(_ symbol: String) -> Bool {
        #if canImport(Glibc)
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol) != nil
        #else
        return dlsym(UnsafeMutableRawPointer(bitPattern: -2), symbol) != nil
        #endif
    }
}
