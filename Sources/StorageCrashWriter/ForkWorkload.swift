import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#endif

/// A record of the fork workload.
struct ForkRecord: Codable {
    var id: Int64
    var writer: String
}

/// A store and `fork()` in a single-threaded process: the parent opens the store, writes and
/// forks; the child tries the parent's store (which must throw `.misuse` about the fork), then
/// opens the store again itself and writes and reads through that one (which must work); it
/// reports through its exit status. The parent waits for it, then writes again and reports the
/// records it finds: `child S` (0 when all went as it should), then `records 1,2,3`.
///
/// The child of a process with one thread can run any code; the tests also fork the
/// multi-threaded test runner (ForkTests), where the child only runs the minimum.
enum ForkWorkload {
    static func run(open: () throws -> ObjectStore, report: (String) -> Void) throws {
        let store = try open()
        try store.save(ForkRecord(id: 1, writer: "parent"))
        let child = fork()
        if child == 0 { _exit(childAttempts(store, open: open)) }
        guard child > 0 else { throw StorageError(.io, "fork failed") }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        report("child \(status & 0x7f == 0 ? (status >> 8) & 0xff : 1_000 + (status & 0x7f))")
        try store.save(ForkRecord(id: 3, writer: "parent"))
        let ids = try store.fetchAll(ForkRecord.self).map { String($0.id) }
        report("records \(ids.joined(separator: ","))")
    }

    /// Bits of the child's exit status.
    private static let parentStoreWorked: Int32 = 1
    private static let parentStoreOtherError: Int32 = 2
    private static let ownStoreFailed: Int32 = 4

    private static func childAttempts(_ store: ObjectStore, open: () throws -> ObjectStore) -> Int32 {
        var status: Int32 = 0
        do {
            try store.save(ForkRecord(id: 9, writer: "child through the parent's store"))
            status |= parentStoreWorked
        } catch let error as StorageError where error.code == .misuse && error.message.contains("fork") {
        } catch {
            status |= parentStoreOtherError
        }
        do {
            let own = try open()
            try own.save(ForkRecord(id: 2, writer: "child"))
            if try own.fetch(ForkRecord.self, id: 1)?.writer != "parent" { status |= ownStoreFailed }
        } catch {
            FileHandle.standardError.write(Data("child: \(error)\n".utf8))
            status |= ownStoreFailed
        }
        return status
    }
}
