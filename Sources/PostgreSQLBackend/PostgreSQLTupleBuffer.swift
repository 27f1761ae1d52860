internal import CPostgreSQL
import Foundation
import Storage

/// A growing byte buffer in memory of its own: bytes and big-endian integers are stored straight
/// into it, without `Array`'s per-append checks.
final class PostgreSQLTupleBuffer {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private(set) var count = 0

    deinit { free(base) }

    /// The bytes stored, valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes (the capacity at least doubles when it grows). It starts
    /// small: most writers hold one record, and an allocation of a few hundred bytes is served from
    /// the allocator's per-thread cache.
    func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grown = max(count + extra, capacity * 2, 512)
        guard let moved = realloc(base, grown) else { fatalError("out of memory for \(grown) bytes of records") }
        base = moved
        capacity = grown
    }

    /// Stores `value` in network byte order; room must have been reserved.
    func store<T: FixedWidthInteger>(_ value: T) {
        base.unsafelyUnwrapped.storeBytes(of: value.bigEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    /// Stores `bytes`; room must have been reserved.
    func store(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        (base.unsafelyUnwrapped + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Forgets the bytes after the first `length`, keeping the memory.
    func truncate(to length: Int) {
        count = min(count, length)
    }
}
