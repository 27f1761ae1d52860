import Foundation
import StorageTestBackends

/// The process's open file descriptors, from `/proc/self/fd`.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Every file and folder under `directory` (itself included), with its permission bits.
func permissionBits(under directory: URL) throws -> [(path: String, mode: Int)] {
    var result: [(String, Int)] = []
    func visit(_ path: String) throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        result.append((path, (attributes[.posixPermissions] as? Int) ?? -1))
        if attributes[.type] as? FileAttributeType == .typeDirectory {
            for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
                try visit(path + "/" + name)
            }
        }
    }
    try visit(directory.path)
    return result
}
