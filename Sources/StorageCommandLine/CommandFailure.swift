import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure as the command reports it: a code, one line for a person
/// (`storage: cannot read 'missing.csv': no such file`), and the exit status. With `--json` the
/// same code and message go to standard error as `{"error": {"code": …, "message": …}}`.
struct CommandFailure {
    /// A `StorageError.Code`'s name, or `usage`, `invalidQuery`, `io` or `invalidInput` for the
    /// command's own failures.
    var code: String
    /// What was wrong and where, in one line.
    var message: String
    /// The lines shown under the message to a person (the caret under a `--where` mistake).
    var detail = ""
    /// The exit status: 2 for a usage error, 1 for any other failure.
    var status: Int32
    /// The collection, column, key and path of a `StorageError`, for `--json`.
    var context: [String: String] = [:]

    /// The failure `error` is, raised while running `command`.
    init(_ error: any Error, command: String, helpCommand: String) {
        switch error {
        case let error as UsageError:
            code = "usage"
            message = error.message + " (see '\(helpCommand)')"
            status = 2
        case let error as WhereSyntaxError:
            code = StorageError.Code.invalidQuery.rawValue
            message = "\(error.option): \(error.message) at character \(error.offset + 1)"
            detail = "  \(error.expression)\n  " + String(repeating: " ", count: error.offset) + "^"
            status = 2
        case let error as StorageError:
            code = error.code.rawValue
            message = Self.readable(error)
            if error.code == .collectionNotEmpty, let end = message.range(of: "; ask to merge")?.lowerBound {
                // The library's advice, in the command's words.
                message = String(message[..<end]) + "; give --merge to upsert, or --replace"
            }
            status = 1
            if let collection = error.collection { context["collection"] = collection }
            if let column = error.column { context["column"] = column }
            if let key = error.key { context["key"] = "\(key)" }
            if let path = error.path { context["path"] = path }
        case let error as InputError:
            code = error.code
            message = error.message
            status = 1
        default:
            code = "error"
            message = FileProblem.reason(error)
            status = 1
        }
    }

    /// The message of `error` with what its context adds (the collection, column or key when
    /// the message does not already name them). The engine's own error behind it is left out:
    /// every backend puts its text in the message already (libpq's would be shown twice).
    static func readable(_ error: StorageError) -> String {
        // An engine's message may span lines (libpq adds a tab-indented hint): one line here.
        var text = error.message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        var added: [String] = []
        if let collection = error.collection, !text.contains(collection) { added.append("collection '\(collection)'") }
        if let column = error.column, !text.contains(column) { added.append("column '\(column)'") }
        if let key = error.key, !text.contains("\(key)") { added.append("key \(key)") }
        if !added.isEmpty { text += " (" + added.joined(separator: ", ") + ")" }
        return text
    }

    /// What is written to standard error: `storage: MESSAGE` and its detail lines, or with
    /// `json` one JSON object.
    func report(json: Bool) -> String {
        guard json else { return "storage: " + message + "\n" + (detail.isEmpty ? "" : detail + "\n") }
        var object: [String: Any] = ["code": code, "message": message]
        for (name, value) in context { object[name] = value }
        let data =
            (try? JSONSerialization.data(
                withJSONObject: ["error": object],
                options: [.sortedKeys, .withoutEscapingSlashes]
            )) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// Why a file could not be read or written, in a few words (`no such file`), from a system
/// error number or an error Foundation threw.
enum FileProblem {
    /// The reason for the system error `number`.
    static func reason(errno number: Int32) -> String {
        switch number {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "it is a folder"
        case ENOTDIR: "a part of the path is not a folder"
        case ENOSPC: "no space left on the device"
        default: String(cString: strerror(number))
        }
    }

    /// The reason behind `error`: the POSIX error of a Foundation file error, or its
    /// description.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return reason(errno: Int32(posix.code))
        }
        if nsError.domain == NSPOSIXErrorDomain { return reason(errno: Int32(nsError.code)) }
        if nsError.domain == NSCocoaErrorDomain {
            switch CocoaError.Code(rawValue: nsError.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file"
            case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
            default: break
            }
        }
        return "\(error)"
    }

    /// Throws `InputError` (`cannot read 'PATH': REASON`) unless `path` names a readable file.
    static func checkReadable(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw InputError("cannot read '\(path)': \(reason(errno: errno))", code: "io")
        }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            throw InputError("cannot read '\(path)': \(reason(errno: EISDIR))", code: "io")
        }
    }
}
