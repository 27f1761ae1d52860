import Foundation
import Storage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open folder, through whose descriptor its files and subfolders are reached (`openat`,
/// `renameat`, `unlinkat`, `mkdirat`, `fstatat` with `AT_SYMLINK_NOFOLLOW`), never through a
/// path: a folder of the store swapped for a symbolic link while the store is open is refused
/// where it is opened (`O_DIRECTORY | O_NOFOLLOW`), and what is already open stays the folder
/// that was checked. The descriptor is closed by `close()` or when the last reference goes.
final class Folder: Sendable {
    let descriptor: Int32
    /// The folder's path, for messages only: nothing is reached through it.
    let path: String
    private let isClosed = Atomic(false)

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens the folder at `path`.
    /// - Parameters:
    ///   - path: the folder's path.
    ///   - followingLink: whether a symbolic link as the path's last component is followed (a
    ///     folder the caller named, as `FileArchive.write` gets); the store's own folders never
    ///     are.
    ///   - code: the code of the error when it cannot be opened.
    /// - Throws: `StorageError` with `code` naming the path when it cannot be opened as a folder.
    convenience init(path: String, followingLink: Bool = false, code: StorageError.Code = .io) throws {
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW)
        let descriptor = open(path, flags)
        guard descriptor >= 0 else { throw FileSystem.error(code, "open the folder", path) }
        self.init(descriptor: descriptor, path: path)
    }

    deinit {
        close()
    }

    /// Closes the descriptor now (a closed store holds no file open); later uses fail with
    /// `EBADF`. Closing twice does nothing.
    func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        closeDescriptor(descriptor)
    }

    /// The path of `name` in the folder, for messages.
    func path(_ name: String) -> String { path + "/" + name }

    /// The folder `name` in this one, or `nil` when there is none.
    /// - Throws: `StorageError` with code `.corrupt` when `name` is a symbolic link or not a
    ///   folder: the store made it a folder, so something else replaced it, and following it would
    ///   read and write outside the store; `.io` when it cannot be opened.
    func subfolder(_ name: String) throws -> Folder? {
        let descriptor = openat(self.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let number = errno
            if number == ENOENT { return nil }
            if number == ELOOP || number == ENOTDIR { throw Self.notAFolder(path(name)) }
            throw FileSystem.error(.io, "open the folder", path(name), errno: number)
        }
        return Folder(descriptor: descriptor, path: path(name))
    }

    /// The error for a folder of the store that something else replaced.
    static func notAFolder(_ path: String) -> StorageError {
        StorageError(
            .corrupt,
            "\(path) should be a folder of the store but is a symbolic link or a file, which the store never follows",
            path: path
        )
    }

    /// Creates the folder `name` (mode 0700) unless it exists.
    /// - Returns: whether it was created.
    /// - Throws: `StorageError` with code `.corrupt` when `name` exists as a symbolic link or a
    ///   file, `.io` when it cannot be created.
    @discardableResult
    func makeSubfolder(_ name: String) throws -> Bool {
        try FileSystem.makeDirectory(in: descriptor, name, path: path(name), code: .io, notAFolder: Self.notAFolder)
    }

    /// Creates the file `name` (mode 0600; it must not exist), writes `bytes` and, when `sync`
    /// is set, fsyncs it.
    func writeNewFile(_ name: String, _ bytes: [UInt8], sync: Bool) throws {
        try FileSystem.writeNewFile(bytes, in: descriptor, name, path: path(name), sync: sync)
    }

    /// The whole file `name`, or `nil` when there is none.
    func readFile(_ name: String) throws -> [UInt8]? {
        try FileSystem.readFile(in: descriptor, name, path: path(name))
    }

    /// Opens the file `name` with `flags` (and mode 0600 when it is created), never following a
    /// symbolic link.
    func openFile(_ name: String, flags: Int32, code: StorageError.Code) throws -> Int32 {
        let descriptor = openat(self.descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileSystem.error(code, "open", path(name)) }
        return descriptor
    }

    /// Fsyncs the file `name`.
    func syncFile(_ name: String) throws {
        try FileSystem.syncFile(in: descriptor, name, path: path(name))
    }

    /// Fsyncs the folder, so that the names created, renamed or removed in it are on disk.
    func sync() throws {
        guard fsync(descriptor) == 0 else { throw FileSystem.error(.io, "fsync the folder", path) }
    }

    /// Flushes every file of the folder's file system (see `FileSystem.syncFileSystem`).
    /// - Returns: `false` when `syncfs` is not available.
    func syncFileSystem() throws -> Bool {
        try FileSystem.syncFileSystem(of: descriptor, path: path)
    }

    /// Renames `source` to `target`, both in this folder (atomic; a symbolic link at `target` is
    /// replaced, never followed).
    func rename(_ source: String, to target: String) throws {
        guard renameat(descriptor, source, descriptor, target) == 0 else {
            throw FileSystem.error(.io, "rename \(path(source)) to", path(target))
        }
    }

    /// Removes the file `name`; a missing file is not an error.
    func remove(_ name: String) throws {
        try FileSystem.remove(in: descriptor, name, path: path(name))
    }

    /// Whether `name` exists, as anything (a symbolic link is not followed).
    func exists(_ name: String) -> Bool {
        FileSystem.exists(in: descriptor, name)
    }

    /// The names in the folder, without `.` and `..`.
    func list() throws -> [String] {
        try FileSystem.list(descriptor, path: path)
    }
}

/// `close(2)`, reachable where a type's own `close()` hides the C function.
func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
    _ = Darwin.close(descriptor)
    #endif
}
