#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The checks every backend makes on the paths it hands to the C library.
///
/// Public for backends written in other packages.
public enum StorePath {
    /// Refuses a path the C library would misread: an empty one, and one with a NUL byte (the C
    /// library stops at the NUL and would use a shorter path).
    /// - Parameters:
    ///   - path: the path to check.
    ///   - role: what the path names, for the message (`"database file"`).
    /// - Throws: ``StorageError`` with code `.cannotOpen`.
    public static func check(_ path: String, role: String) throws {
        guard !path.isEmpty else {
            throw StorageError(.cannotOpen, "the \(role)'s path is empty", path: path)
        }
        guard !path.utf8.contains(0) else {
            throw StorageError(.cannotOpen, "the \(role)'s path contains a NUL byte", path: path)
        }
    }

    /// What a store opened read-only must find at its path, which it never creates.
    public enum Existing: Sendable {
        /// A regular file (an SQLite database, an LMDB store).
        case file
        /// A folder (a file archive).
        case folder
    }

    /// The status of what is at `path`, which must exist and be `kind` (never a symbolic link),
    /// after `check(_:role:)`: for a store opened read-only, which creates nothing.
    /// - Parameters:
    ///   - path: the store's path.
    ///   - role: what the path names, for the message (`"database file"`).
    ///   - kind: a file or a folder.
    /// - Returns: its device and inode.
    /// - Throws: ``StorageError`` with code `.cannotOpen` naming `role` and the reason.
    @discardableResult
    public static func existing(_ path: String, role: String, kind: Existing) throws -> (device: UInt64, inode: UInt64)
    {
        try check(path, role: role)
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let reason =
                errno == ENOENT ? (kind == .file ? "no such file" : "no such folder") : String(cString: strerror(errno))
            throw StorageError(
                .cannotOpen,
                "cannot open the \(role) read-only: \(reason) (a store opened read-only is never created)",
                path: path
            )
        }
        let wanted = kind == .file ? S_IFREG : S_IFDIR
        guard status.st_mode & S_IFMT == wanted else {
            let reason =
                status.st_mode & S_IFMT == S_IFLNK
                ? "the path is a symbolic link" : kind == .file ? "it is not a regular file" : "it is not a folder"
            throw StorageError(.cannotOpen, "cannot open the \(role): \(reason)", path: path)
        }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// Creates the file at `path` with mode 0600 unless it exists, refusing symbolic links and
    /// anything that is not a regular file, after `check(_:role:)`.
    /// - Parameters:
    ///   - path: the file to create or open.
    ///   - role: what the file is, for the message (`"lock file"`).
    /// - Returns: the file's device and inode.
    /// - Throws: ``StorageError`` with code `.cannotOpen` naming `role` and the reason.
    @discardableResult
    public static func createPrivateFile(at path: String, role: String) throws -> (device: UInt64, inode: UInt64) {
        try check(path, role: role)
        let descriptor = open(path, O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            let reason = code == ELOOP ? "the path is a symbolic link" : String(cString: strerror(code))
            throw StorageError(.cannotOpen, "cannot open the \(role): \(reason)", path: path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw StorageError(.cannotOpen, "the \(role) is not a regular file", path: path)
        }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }
}
