import Foundation

/// A property of a ``Settings`` subclass kept in the store under its name (or the key given).
///
/// ```swift
/// final class AppSettings: Settings {
///     @Setting var userName = "guest"
///     @Setting("user_id") var userID: Int? = nil
/// }
/// ```
/// The projected value (`$userName`) is a ``SettingHandle``: reset, atomic update, errors that
/// throw, and a stream of changes. `@Setting` works only on properties of a ``Settings`` subclass.
@propertyWrapper
public struct Setting<Value: Codable & Sendable>: Sendable {
    let state: SettingState<Value>

    /// Declares a setting with its default value and, optionally, its key (the property's name
    /// when `nil`).
    /// - Parameters:
    ///   - wrappedValue: the default, read while the key is not set.
    ///   - key: the key, or `nil` for the property's name.
    public init(wrappedValue: Value, _ key: String? = nil) {
        state = SettingState(defaultValue: wrappedValue, explicitKey: key)
    }

    /// Not available: a setting is read and written through its ``Settings`` instance.
    @available(*, unavailable, message: "@Setting can only be used on properties of a Settings subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        // swift-format-ignore: NoEmptyClosure
        set {}
    }

    /// Reads or assigns the setting of `owner`.
    /// - Parameters:
    ///   - owner: the settings object.
    ///   - wrappedKeyPath: the property.
    ///   - storageKeyPath: the property's wrapper.
    /// - Returns: the stored value, or the default when the key is not set or cannot be read.
    public static subscript<Owner: Settings>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Setting<Value>>
    ) -> Value {
        get { owner[keyPath: storageKeyPath].state.read(owner) }
        set {
            let state = owner[keyPath: storageKeyPath].state
            do {
                try state.write(newValue, owner)
            } catch {
                owner.settingsProblem(SettingsProblem(key: state.key, kind: .writeFailed, error: error.asStorageError))
            }
        }
    }

    /// The setting's handle: `$name.reset()`, `$name.update { }`, `$name.changes`.
    public var projectedValue: SettingHandle<Value> { SettingHandle(state: state) }
}

/// What `$name` gives for a `@Setting var name`: operations on the setting that report errors
/// by throwing, and its changes.
public struct SettingHandle<Value: Codable & Sendable>: Sendable {
    let state: SettingState<Value>

    /// The key the setting is stored under.
    public var key: String { state.key }

    /// The default declared with the property.
    public var defaultValue: Value { state.defaultValue }

    /// The current value, or a thrown ``StorageError`` where the property would return the default.
    /// - Returns: the stored value, or the default when the key is not set.
    /// - Throws: ``StorageError``: `.typeMismatch` or `.invalidJSON` when the stored value no longer
    ///   decodes as `Value`, `.closed` after the store is closed, or the store's failure.
    public func get() throws -> Value {
        try state.read(state.requireOwner(), reporting: false)
    }

    /// Stores `value`, throwing when it cannot be stored.
    /// - Parameter value: the new value; `nil` (for an optional setting) removes the key.
    /// - Throws: ``StorageError`` when the value cannot be encoded or stored (`.closed`, `.busy`,
    ///   `.io`, ...); the stored value is then unchanged.
    public func set(_ value: Value) throws {
        try state.write(value, state.requireOwner())
    }

    /// Removes the stored value, so the setting reads its default.
    /// - Throws: ``StorageError`` when the store fails (`.closed`, `.busy`, `.io`, ...).
    public func reset() throws {
        let owner = try state.requireOwner()
        try owner.store.delete(SettingRecord.self, id: state.id)
    }

    /// Reads, changes and stores the value in one transaction, so concurrent updates (say, from
    /// several tasks incrementing a counter) are never lost.
    ///
    /// ```swift
    /// try settings.$launchCount.update { $0 += 1 }
    /// ```
    /// - Parameter body: changes the value in place; it runs inside the transaction.
    /// - Returns: the value stored.
    /// - Throws: what `body` throws (nothing is stored then), or ``StorageError`` as ``get()`` and
    ///   ``set(_:)`` do.
    @discardableResult
    public func update(_ body: (inout Value) throws -> Void) throws -> Value {
        let owner = try state.requireOwner()
        return try owner.store.transaction { transaction in
            let stored = try transaction.fetch(SettingRecord.self, id: state.id)?.value
            var value = stored.flatMap { try? state.decode($0) } ?? state.defaultValue
            try body(&value)
            if let json = try state.encode(value) {
                try transaction.save(state.record(json))
            } else {
                try transaction.delete(SettingRecord.self, id: state.id)
            }
            return value
        }
    }

    /// The setting's new value after every committed change to it, by any ``Settings`` instance
    /// on the same ``ObjectStore`` (its default after a reset). The stream starts with the next
    /// change; cancelling the consuming task ends it. Values wait in an unbounded buffer, so a
    /// slow consumer sees every change, late, and never slows a writer.
    public var changes: AsyncStream<Value> {
        guard let owner = state.owner else { return AsyncStream { $0.finish() } }
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let state = state
        let cancel = owner.store.settingsCenter.subscribe(state.id) { json in
            continuation.yield(json.flatMap { try? state.decode($0) } ?? state.defaultValue)
        }
        continuation.onTermination = { _ in cancel() }
        // Other processes' changes to the setting are reported from now on.
        owner.store.observeCommitsElsewhere()
        return stream
    }
}

/// Type-erased access to a ``Setting``, for binding by reflection.
protocol BindableSetting {
    var explicitKey: String? { get }
    func bind(to owner: Settings, key: String)
}

extension Setting: BindableSetting {
    var explicitKey: String? { state.explicitKey }

    func bind(to owner: Settings, key: String) {
        state.bind(to: owner, key: key)
    }
}

/// The state behind one `@Setting` of one ``Settings`` instance.
///
/// `@unchecked Sendable`: `owner`, `key` and `id` are written once, by `bind`, while the
/// ``Settings`` initializer runs and before the instance can reach another thread; `decoded` and
/// `reported` are guarded by their locks.
final class SettingState<Value: Codable & Sendable>: @unchecked Sendable {
    let defaultValue: Value
    let explicitKey: String?
    private(set) weak var owner: Settings?
    private(set) var key = ""
    private(set) var id = ""
    private var namespace = ""
    /// The last stored JSON decoded, and its value: reads of an unchanged value decode nothing.
    private let decoded = Locked<(json: String, value: Value)?>(nil)
    /// The last unreadable stored JSON reported, so one bad value is reported once.
    private let reported = Locked<String?>(nil)

    init(defaultValue: Value, explicitKey: String?) {
        self.defaultValue = defaultValue
        self.explicitKey = explicitKey
    }

    func bind(to owner: Settings, key: String) {
        self.owner = owner
        self.key = key
        namespace = owner.namespace
        id = SettingRecord.id(namespace: owner.namespace, key: key)
    }

    func requireOwner() throws -> Settings {
        guard let owner else {
            throw StorageError(.misuse, "the setting '\(key)' was used after its Settings instance was released")
        }
        return owner
    }

    func record(_ json: String) -> SettingRecord {
        SettingRecord(id: id, namespace: namespace, key: key, value: json)
    }

    /// The value, or the default (reported to the owner) when it cannot be read.
    func read(_ owner: Settings) -> Value {
        do {
            return try read(owner, reporting: true)
        } catch {
            owner.settingsProblem(SettingsProblem(key: key, kind: .readFailed, error: error.asStorageError))
            return defaultValue
        }
    }

    /// The value; an unreadable stored value is reported and read as the default when
    /// `reporting`, and thrown otherwise.
    func read(_ owner: Settings, reporting: Bool) throws -> Value {
        guard let json = try owner.store.settingsCenter.storedJSON(for: id, in: owner.store) else {
            return defaultValue
        }
        if let cached = decoded.withLock({ $0 }), cached.json == json { return cached.value }
        do {
            let value = try decode(json)
            decoded.withLock { $0 = (json, value) }
            return value
        } catch {
            guard reporting else { throw error }
            let isNew = reported.withLock { last in
                defer { last = json }
                return last != json
            }
            if isNew {
                owner.settingsProblem(SettingsProblem(key: key, kind: .unreadableValue(stored: json), error: error))
            }
            return defaultValue
        }
    }

    func write(_ value: Value, _ owner: Settings) throws {
        if let json = try encode(value) {
            try owner.store.save(record(json))
        } else {
            try owner.store.delete(SettingRecord.self, id: id)
        }
    }

    /// The value as JSON text, or nil for a value that encodes as JSON `null` (an optional's nil).
    func encode(_ value: Value) throws -> String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let json = String(decoding: try encoder.encode(value), as: UTF8.self)
            return json == "null" ? nil : json
        } catch {
            throw StorageError(
                .unsupportedType,
                "the value of setting '\(key)' cannot be encoded: \(error)",
                key: .text(key)
            )
        }
    }

    func decode(_ json: String) throws(StorageError) -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(Value.self, from: Data(json.utf8))
        } catch {
            throw StorageError(
                .typeMismatch,
                "the stored value of setting '\(key)' is not a \(Value.self): \(json.prefix(200))",
                key: .text(key)
            )
        }
    }
}

extension Error {
    /// The error as a ``StorageError``: itself when it is one, else wrapped as an engine error.
    var asStorageError: StorageError {
        if let error = self as? StorageError { return error }
        return StorageError(.engine, "\(self)")
    }
}
