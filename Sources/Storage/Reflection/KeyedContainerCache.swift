/// The keyed container a row coder made last, handed out again for later rows instead of a new
/// one: making a `KeyedDecodingContainer` or `KeyedEncodingContainer` allocates a box and looks
/// up its generic metadata, which cost about a tenth of coding a ten-property record.
///
/// A container is kept from the second request for the same key type on: a single-record fetch
/// or save would only pay for keeping it. The coders hold the cache behind a pointer, so a row
/// pays no exclusivity check for it.
struct KeyedContainerCache {
    private var key: ObjectIdentifier?
    private var container: UnsafeMutableRawPointer?
    private var destroy: ((UnsafeMutableRawPointer) -> Void)?

    /// The container kept for `key`, or one from `make` (kept if this is the second request for
    /// `key` and nothing is kept yet).
    mutating func container<Container>(for key: ObjectIdentifier, make: () -> Container) -> Container {
        if self.key == key, let container {
            return container.assumingMemoryBound(to: Container.self).pointee
        }
        let made = make()
        if container == nil && self.key != key {
            self.key = key
        } else if container == nil {
            let stored = UnsafeMutablePointer<Container>.allocate(capacity: 1)
            stored.initialize(to: made)
            self.key = key
            container = UnsafeMutableRawPointer(stored)
            destroy = { raw in
                let typed = raw.assumingMemoryBound(to: Container.self)
                typed.deinitialize(count: 1)
                typed.deallocate()
            }
        }
        return made
    }

    /// Frees the kept container; called once, by the coder's `deinit`.
    mutating func release() {
        if let container { destroy?(container) }
        container = nil
        destroy = nil
    }
}
