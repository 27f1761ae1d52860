import Foundation
import Storage
import StorageTestSupport

@testable import LMDBBackend

/// Runs `body` with a fresh folder and the path of a store file in it.
func withStorePath<R>(_ body: (URL, String) throws -> R) throws -> R {
    try TemporaryDirectory.with("lmdb-test") { directory in
        try body(directory, directory.appendingPathComponent("store.lmdb").path)
    }
}
