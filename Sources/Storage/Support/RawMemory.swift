import Foundation

/// Memory from the C allocator, for buffers that grow by `realloc` (`ValueBuffer`).
enum RawMemory {
    /// Whether values of `type` may live in memory from `resize`: values a bitwise copy moves
    /// (so `realloc` may move them), aligned no more strictly than `malloc` aligns.
    @inline(__always)
    static func canResize<T>(_ type: T.Type) -> Bool {
        _isBitwiseTakable(T.self) && MemoryLayout<T>.alignment <= 16
    }

    /// `memory` (from an earlier call, or `nil` for new memory) resized to `bytes`, its contents
    /// kept up to the smaller size. Stops the process when the system has no memory left, as
    /// `allocate` does.
    static func resize(_ memory: UnsafeMutableRawPointer?, to bytes: Int) -> UnsafeMutableRawPointer {
        guard let resized = realloc(memory, Swift.max(bytes, 1)) else {
            fatalError("out of memory: cannot allocate \(bytes) bytes")
        }
        return resized
    }

    /// Frees memory from `resize`.
    static func release(_ memory: UnsafeMutableRawPointer) {
        free(memory)
    }
}
