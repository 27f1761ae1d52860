import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls of the store, each turning a failure into a `StorageError` naming the path.
///
/// Each call takes the descriptor of a folder and a name in it (`openat`, `renameat`,
/// `unlinkat`, `mkdirat`, `fstatat`), so that the store reaches its files only through folders it
/// opened and checked (`Folder`); `AT_FDCWD` and a path serve the callers that have only a path
/// (`FileArchive.read`, tests). Files are created with mode 0600 and folders with 0700; symbolic
/// links are never followed where a file is opened (`O_NOFOLLOW`).
enum FileSystem {
    /// Larger files are refused before anything is allocated for them; the writers never write
    /// one (`ArchiveWriter`, `FileArchive.write`).
    static let maximumFileSize = ArchiveLayout.maximumSize

    static func error(
        _ code: StorageError.Code,
        _ action: String,
        _ path: String,
        errno number: Int32 = errno
    )
        -> StorageError
    {
        let reason = number == ELOOP ? "the path is a symbolic link" : String(cString: strerror(number))
        return StorageError(
            code,
            "cannot \(action) \(path): \(reason)",
            path: path,
            underlying: POSIXError(POSIXErrorCode(rawValue: number) ?? .EIO)
        )
    }

    /// Creates `name` in the folder `directory` (it must not exist), writes `bytes` and, when
    /// `sync` is set, fsyncs it.
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - directory: a descriptor of the folder.
    ///   - name: the file's name in the folder.
    ///   - path: the file's path, for messages.
    ///   - sync: whether to fsync the file before returning.
    /// - Throws: `StorageError` with code `.io` naming the path and the system's reason (a full
    ///   disk included); the file may then exist, partly written.
    static func writeNewFile(_ bytes: [UInt8], in directory: Int32, _ name: String, path: String, sync: Bool) throws {
        let descriptor = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw error(.io, "create", path) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        try bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let result = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw error(.io, "write", path)
                }
                written += result
            }
        }
        if sync, fsync(descriptor) != 0 { throw error(.io, "fsync", path) }
        closed = true
        guard close(descriptor) == 0 else { throw error(.io, "close", path) }
    }

    /// Creates `path` (which must not exist), writes `bytes` and, when `sync` is set, fsyncs it.
    static func writeNewFile(_ bytes: [UInt8], at path: String, sync: Bool) throws {
        try writeNewFile(bytes, in: AT_FDCWD, path, path: path, sync: sync)
    }

    /// Fsyncs the existing file `name` of the folder `directory`.
    static func syncFile(in directory: Int32, _ name: String, path: String) throws {
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw error(.io, "open", path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw error(.io, "fsync", path) }
    }

    /// `syncfs(2)`, which Glibc's module map does not export: found at run time, `nil` where the
    /// C library lacks it.
    private static let syncFileSystemFunction: (@convention(c) (Int32) -> Int32)? = {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Flushes every file of the file system holding the open file `descriptor` with one
    /// `syncfs`: one journal commit of the file system for a whole batch, instead of one fsync
    /// per file.
    /// - Returns: `false` when `syncfs` is not available (the caller fsyncs each file).
    static func syncFileSystem(of descriptor: Int32, path: String) throws -> Bool {
        guard let syncfs = syncFileSystemFunction else { return false }
        guard syncfs(descriptor) == 0 else { throw error(.io, "syncfs", path) }
        return true
    }

    /// `syncFileSystem(of:path:)` for the file system holding the folder `path`.
    static func syncFileSystem(containing path: String) throws -> Bool {
        // Through the folder's method: its descriptor stays open for the call.
        try Folder(path: path).syncFileSystem()
    }

    /// The whole file `name` of the folder `directory`, or `nil` when it does not exist.
    /// - Parameters:
    ///   - directory: a descriptor of the folder.
    ///   - name: the file's name in the folder.
    ///   - path: the file's path, for messages.
    /// - Returns: the file's bytes, or `nil` when there is no such file.
    /// - Throws: `StorageError` naming the path: `.io` when the file cannot be read, `.corrupt`
    ///   when it is not a regular file or is too large.
    static func readFile(in directory: Int32, _ name: String, path: String) throws -> [UInt8]? {
        // O_NONBLOCK: a FIFO planted under a record's name must not hang the open; for a
        // regular file it changes nothing.
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw error(.io, "open", path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(.io, "stat", path) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw StorageError(.corrupt, "\(path) is not a regular file", path: path)
        }
        guard status.st_size <= maximumFileSize else {
            throw StorageError(.corrupt, "\(path) is \(status.st_size) bytes, more than an archive may be", path: path)
        }
        let size = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var total = 0
        try bytes.withUnsafeMutableBytes { buffer in
            while total < size {
                let result = read(descriptor, buffer.baseAddress! + total, size - total)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw error(.io, "read", path)
                }
                if result == 0 { break }
                total += result
            }
        }
        if total < size { bytes.removeLast(size - total) }
        return bytes
    }

    /// The whole file at `path`, or `nil` when it does not exist.
    static func readFile(_ path: String) throws -> [UInt8]? {
        try readFile(in: AT_FDCWD, path, path: path)
    }

    /// Removes the file `name` of the folder `directory`; a missing file is not an error.
    static func remove(in directory: Int32, _ name: String, path: String) throws {
        guard unlinkat(directory, name, 0) == 0 || errno == ENOENT else { throw error(.io, "remove", path) }
    }

    /// Removes a file; a missing file is not an error.
    static func remove(_ path: String) throws {
        try remove(in: AT_FDCWD, path, path: path)
    }

    /// Whether `name` exists in the folder `directory`, as anything (a symbolic link is not
    /// followed).
    static func exists(in directory: Int32, _ name: String) -> Bool {
        var status = stat()
        return fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0
    }

    static func exists(_ path: String) -> Bool {
        exists(in: AT_FDCWD, path)
    }

    /// Creates the folder with mode 0700 unless it exists; an existing path must be a real folder.
    /// - Returns: whether it was created.
    @discardableResult
    static func makeDirectory(_ path: String, code: StorageError.Code = .io) throws -> Bool {
        try makeDirectory(in: AT_FDCWD, path, path: path, code: code) { path in
            StorageError(code, "\(path) exists and is not a folder (or is a symbolic link)", path: path)
        }
    }

    /// Creates the folder `name` of the folder `directory` with mode 0700 unless it exists.
    /// - Parameters:
    ///   - directory: a descriptor of the parent folder.
    ///   - name: the folder's name in it.
    ///   - path: the folder's path, for messages.
    ///   - code: the code of the error when it cannot be created.
    ///   - notAFolder: the error when `name` exists as something else than a real folder (a
    ///     symbolic link, never followed, or a file), given the path.
    /// - Returns: whether it was created.
    /// - Throws: `StorageError` with `code`, or the `notAFolder` error.
    static func makeDirectory(
        in directory: Int32,
        _ name: String,
        path: String,
        code: StorageError.Code,
        notAFolder: (String) -> StorageError
    ) throws -> Bool {
        if mkdirat(directory, name, 0o700) == 0 { return true }
        guard errno == EEXIST else { throw error(code, "create the folder", path) }
        var status = stat()
        guard fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw notAFolder(path)
        }
        return false
    }

    /// The names in the open folder `descriptor`, without `.` and `..`.
    static func list(_ descriptor: Int32, path: String) throws -> [String] {
        // A descriptor of its own, with its own reading position: `fdopendir` takes it over.
        let own = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard own >= 0 else { throw error(.io, "list the folder", path) }
        guard let directory = fdopendir(own) else {
            close(own)
            throw error(.io, "list the folder", path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The names in the folder at `path`, without `.` and `..`.
    static func list(_ path: String) throws -> [String] {
        try Folder(path: path).list()
    }

    /// A name no other file of the store has: `.tmp-` and 16 random hex digits.
    static func temporaryName() -> String {
        ".tmp-" + String(UInt64.random(in: 0...UInt64.max) | (1 << 63), radix: 16)
    }
}
