package import Storage

/// A person as the first version of an app stored it, for the migration checks. Its indexes are
/// not unique: the in-memory backend checks a unique index against every record on each save.
package struct MigratedPersonV1: Codable, Equatable, Sendable, StorableModel {
    package static let collectionName = "mig_people"
    package static let indexes: [IndexDefinition] = [.init(["email"]), .init(["name"])]

    package var id: Int64
    package var name: String
    package var email: String
    package var legacy: Int

    package init(id: Int64, name: String, email: String, legacy: Int) {
        self.id = id
        self.name = name
        self.email = email
        self.legacy = legacy
    }

    /// Person `id` of a fixed set.
    package static func make(_ id: Int64) -> MigratedPersonV1 {
        MigratedPersonV1(id: id, name: "n\(id)", email: "p\(id)@example.com", legacy: Int(id % 7))
    }
}

/// The same person after `renameColumn("name", to: "fullName")` and `dropColumn("legacy")`.
package struct MigratedPersonV2: Codable, Equatable, Sendable, StorableModel {
    package static let collectionName = "mig_people"

    package var id: Int64
    package var fullName: String
    package var email: String

    package init(id: Int64, fullName: String, email: String) {
        self.id = id
        self.fullName = fullName
        self.email = email
    }
}

/// The person as `transform` rewrites it: a derived column, another type for one.
package struct MigratedPersonV3: Codable, Equatable, Sendable, StorableModel {
    package static let collectionName = "mig_people"

    package var id: Int64
    package var fullName: String
    package var email: String
    package var nameLength: Int

    package init(id: Int64, fullName: String, email: String, nameLength: Int) {
        self.id = id
        self.fullName = fullName
        self.email = email
        self.nameLength = nameLength
    }

    /// What the transform makes of `old`.
    package static func from(_ old: MigratedPersonV2) -> MigratedPersonV3 {
        MigratedPersonV3(
            id: old.id,
            fullName: old.fullName.uppercased(),
            email: old.email,
            nameLength: old.fullName.count
        )
    }
}

/// One line a migration writes, so checks can tell which ran, how often and in which order.
package struct MigrationTick: Codable, Equatable, Sendable, StorableModel {
    package static let collectionName = "mig_ticks"

    /// The migration's name.
    package var id: String
    /// How many ticks the store held when it ran.
    package var before: Int

    package init(id: String, before: Int) {
        self.id = id
        self.before = before
    }
}

/// A record with a key the store assigns, for the auto-key sequence across a rename.
package struct MigratedNote: Codable, Equatable, Sendable, StorableModel {
    package static let collectionName = "mig_notes"
    package var text: String

    package init(text: String) {
        self.text = text
    }
}

extension MigrationContext {
    /// Records that the running migration ran (`MigrationTick`).
    package func tick() throws {
        try save(MigrationTick(id: name, before: try count(MigrationTick.self)))
    }
}
