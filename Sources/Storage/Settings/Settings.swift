import Foundation

/// Typed settings over any store: declare properties with `@Setting` in a subclass, and each
/// reads its stored value (or its declared default) and persists every assignment at once.
///
/// ```swift
/// final class AppSettings: Settings {
///     @Setting var userName = "guest"          // key "userName", default "guest"
///     @Setting var launchCount = 0
///     @Setting var lastLogin: Date? = nil
///     @Setting("theme_name") var theme = "light"   // an explicit key
/// }
/// let settings = try AppSettings(store: store)
/// settings.launchCount += 1                    // persisted at once
/// try settings.$launchCount.update { $0 += 1 } // atomic read-modify-write
/// try settings.$userName.reset()               // back to "guest"
/// for await name in settings.$userName.changes { ... }
/// ```
///
/// - Keys: each property's key is its name, found by reflection when the instance is created
///   (`Mirror` shows the wrapper's storage as `_userName`), or the key given to `@Setting`.
///   Each subclass has its own namespace, by default the subclass's name, so two subclasses
///   never share a key.
/// - Defaults are declared, never written: a key that was never set reads as the default in the
///   code that reads it, so changing a default changes what unset keys read.
/// - Values: any `Codable & Sendable` value, stored as JSON text in the store's internal
///   `_settings` collection (dates as seconds since 1970). Assigning `nil` to an optional
///   setting removes its key, so it reads as its default again.
/// - Concurrency: safe from many threads. ``Settings`` is not declared `Sendable`, because Swift
///   would then require every subclass to restate it; to share an instance across tasks, declare
///   your subclass `@unchecked Sendable` (`final class AppSettings: Settings, @unchecked
///   Sendable`), which is sound: every `@Setting` is bound once, when the instance is created,
///   and guarded by locks after. The first read of a key goes to the store; later ones
///   are served from a cache shared by every ``Settings`` instance on the same ``ObjectStore``,
///   which every commit to a setting updates. Writes go straight to the store. `x += 1` is a
///   read followed by a write, so concurrent increments can overwrite each other: use
///   `$x.update { $0 += 1 }`, which runs in one transaction.
/// - Inside `store.transaction { }` on the same thread, an assignment joins that transaction;
///   reads there may not see the transaction's own assignments until it commits.
/// - Problems never crash: a stored value that no longer decodes as the property's type (an
///   older version stored a `String`, the property is now an `Int`) reads as the default, and a
///   failed read or assignment leaves the stored value as it was. Each is reported to
///   `settingsProblem(_:)`.
open class Settings {

    /// The store the settings are kept in.
    public let store: ObjectStore
    /// The namespace of this instance's keys: by default the subclass's name.
    public let namespace: String

    /// Binds every `@Setting` property of the subclass to `store`.
    ///
    /// Nothing is read or written yet: the first read of each key reads the store.
    /// - Parameters:
    ///   - store: where the settings are kept.
    ///   - namespace: the namespace of the keys; `nil` for the subclass's name.
    /// - Throws: ``StorageError`` with code `.schemaMismatch` when two properties have one key, or
    ///   `.invalidKey` when the namespace or a key is empty.
    public init(store: ObjectStore, namespace: String? = nil) throws {
        self.store = store
        self.namespace = namespace ?? String(describing: type(of: self))
        guard !self.namespace.isEmpty else {
            throw StorageError(.invalidKey, "a settings namespace may not be empty")
        }
        // Keys compare by their bytes, as the stored records do: NFC and NFD spellings are two keys.
        var propertyByKey: [StorageKey: String] = [:]
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                guard let setting = child.value as? any BindableSetting, let label = child.label else { continue }
                let property = label.hasPrefix("_") ? String(label.dropFirst()) : label
                let key = setting.explicitKey ?? property
                guard !key.isEmpty else {
                    throw StorageError(.invalidKey, "the setting '\(property)' has an empty key", key: .text(key))
                }
                if let other = propertyByKey[StorageKey(.text(key))] {
                    throw StorageError(
                        .schemaMismatch,
                        "the settings '\(other)' and '\(property)' of \(self.namespace) both use the key '\(key)'",
                        key: .text(key)
                    )
                }
                propertyByKey[StorageKey(.text(key))] = property
                setting.bind(to: self, key: key)
            }
            mirror = current.superclassMirror
        }
    }

    /// Called when a setting cannot be read or written; the default does nothing.
    ///
    /// Override it to log or count problems. It is called on the thread that read or assigned
    /// the setting, at most once per distinct unreadable stored value.
    /// - Parameter problem: the key, what went wrong, and the error.
    open func settingsProblem(_ problem: SettingsProblem) {}

    /// Removes every key of this namespace from the store, so every setting reads its default.
    /// - Throws: ``StorageError`` when the store fails (`.closed`, `.busy`, `.io`, ...); nothing is
    ///   removed then.
    public func resetAll() throws {
        try store.deleteAll(SettingRecord.self, where: Column("namespace") == namespace)
    }
}

/// Something that went wrong with a setting, reported to `Settings.settingsProblem(_:)`.
public struct SettingsProblem: Sendable, CustomStringConvertible {
    /// What kind of problem it was.
    public enum Kind: Sendable {
        /// The stored value does not decode as the property's type; the default was returned.
        case unreadableValue(stored: String)
        /// The store could not be read; the default was returned.
        case readFailed
        /// An assignment could not be stored; the stored value is unchanged.
        case writeFailed
    }

    /// The setting's key.
    public var key: String
    /// What happened.
    public var kind: Kind
    /// The underlying error.
    public var error: StorageError

    /// The key, the kind of problem and the error, in one line.
    public var description: String { "setting '\(key)': \(kind): \(error)" }
}
