// The stores the contract files (APIContractTests.swift, AsyncContractTests.swift and
// ObservationSettingsContractTests.swift, byte for byte the copies of ../shared/contract) run on:
// one of every backend of the package, the PostgreSQL server included. They run here only.
import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport

/// One store of every backend, each kept in `dir`: the in-memory store, SQLite, LMDB, the file
/// archive and PostgreSQL (a schema of its own for `dir`).
/// - Parameter dir: the contract test's folder.
/// - Returns: the stores, opened.
/// - Throws: what opening a backend throws.
func contractStores(in dir: URL) throws -> [ObjectStore] {
    try fixtures.map { try $0.openStore(in: dir) }
}
