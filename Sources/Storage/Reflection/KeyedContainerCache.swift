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
    /// For `kept(for:)`: the container kept in a `KeptContainer`, and its key type.
    private var keptKey: ObjectIdentifier?
    private var keptObject: AnyObject?

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

    /// The object keeping the container made for `key` (a `KeptContainer` of it, see
    /// `keep(_:for:)`), or `nil` when none is kept yet. Unretained: the cache keeps it alive
    /// until `release()`.
    @inline(__always)
    func kept(for key: ObjectIdentifier) -> Unmanaged<AnyObject>? {
        guard keptKey == key, let keptObject else { return nil }
        return Unmanaged.passUnretained(keptObject)
    }

    /// Offers `made`, just made for `key`, for `kept(for:)`: kept from the second offer for the
    /// same key on (a single-record decode would only pay for keeping it), unless one is kept.
    mutating func keep<Container>(_ made: Container, for key: ObjectIdentifier) {
        guard keptObject == nil else { return }
        guard keptKey == key else {
            keptKey = key
            return
        }
        keptObject = KeptContainer(made)
    }

    /// Frees the kept container; called once, by the coder's `deinit`.
    mutating func release() {
        if let container { destroy?(container) }
        container = nil
        destroy = nil
        keptObject = nil
    }
}

/// A container kept by `KeyedContainerCache.keep(_:for:)`, copied out by `copy()`.
///
/// Why an object: a coder's `container(keyedBy:)` is generic over the key type, and
/// `KeyedDecodingContainer<Key>` is a resilient type of the standard library, so copying one
/// there asks the runtime for its metadata (a hash look-up a row: docs/BENCHMARKS.md). A
/// method of this class finds the metadata in the object's own class metadata instead: the
/// caller casts the kept object to `KeptContainer<KeyedDecodingContainer<Key>>`, which
/// in a release build needs no metadata (`unsafeDowncast` checks nothing there), and `copy()` needs only what the object carries.
final class KeptContainer<Container> {
    let container: Container

    init(_ container: Container) { self.container = container }

    /// A copy of the kept container. Never inlined: inlined into `container(keyedBy:)`, the
    /// copy looked the container's metadata up again instead of taking it from this object.
    @inline(never)
    func copy() -> Container { container }
}
