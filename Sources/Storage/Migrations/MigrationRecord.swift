import Foundation

/// One applied migration as the store records it, in its hidden `_migrations` collection: the
/// name, its place in the order the migrations were applied, and when.
struct MigrationRecord: Codable, StorableModel, InternalModel {
    static let collectionName = "_migrations"

    /// The migration's name, as registered with ``Migrator/register(_:_:)``.
    var id: String
    /// 1 for the first migration applied to the store, then 2, 3, …
    var position: Int64
    /// When the migration's transaction ran (seconds since 1970).
    var appliedAt: Date
}

extension Session {
    /// The names of the migrations applied to the store, in the order they were applied.
    func appliedMigrationNames() throws -> [String] {
        guard try storedSchema(MigrationRecord.collectionName) != nil else { return [] }
        return try fetchAll(
            MigrationRecord.self,
            where: nil,
            orderBy: [.ascending("position")],
            limit: nil,
            offset: 0
        ).map(\.id)
    }
}
