/// Validation of collection and column names.
///
/// A column name is any key real data has (JSON keys, CSV headers: spaces, capitals, `#`, `/`,
/// quotes, accents, emoji): any non-empty UTF-8 string without NUL, of at most
/// `maximumColumnBytes` bytes, except `_key` (the auto-assigned key). Every backend quotes or
/// encodes it (SQLite and PostgreSQL double quotes; LMDB and the archive keep names inside their
/// catalogs, never in a path), so no name can change a statement or reach the file system.
///
/// A collection name stays stricter, because it names a folder of the archive and the files of
/// other engines: 1 to 128 characters, each a letter, a digit, `_`, `-` or `.`, not starting with
/// `sqlite_` (SQLite's reserved prefix) nor with `_` (our own reserved prefix).
///
/// Names are compared ignoring ASCII case, as SQLite compares them, on every backend, and
/// ignoring Unicode normalization, as Swift compares strings: `café` spelt with `é` (NFC) and
/// with `e` and a combining accent (NFD) are one name. A collection keeps one spelling of each
/// of its column names; a write that spells one of them another way (two properties of a type,
/// two keys of a JSON object or a dictionary, two CSV headers, a batch or a type beside the
/// stored schema) is refused, naming both spellings (`spelling(_:)`), and a query must spell a
/// column as it is stored. Public for backends written in other packages: compare names with
/// `folded(_:)` (and `==`).
public enum Identifier {
    /// The most Unicode scalars a collection name may have.
    public static let maximumLength = 128
    /// The most UTF-8 bytes a column name may have.
    public static let maximumColumnBytes = 255

    /// Refuses a collection name that is not a valid identifier.
    /// - Parameters:
    ///   - name: the collection name.
    ///   - allowingReserved: whether a name starting with `_` is allowed: only for the
    ///   store's own collections.
    /// - Throws: ``StorageError`` with code `.invalidIdentifier`.
    public static func validateCollection(_ name: String, allowingReserved: Bool = false) throws {
        if let problem = problem(with: name) {
            throw StorageError(.invalidIdentifier, "invalid collection name \(quoted(name)): \(problem)")
        }
        if name.hasPrefix("_") && !allowingReserved {
            throw StorageError(
                .invalidIdentifier,
                "invalid collection name \(quoted(name)): names starting with '_' are reserved"
            )
        }
    }

    /// Refuses a column name that is empty, longer than `maximumColumnBytes` UTF-8 bytes or
    /// holds NUL, or that is the auto-assigned key's column without `allowingReserved`.
    /// - Parameters:
    ///   - name: the column name.
    ///   - collection: the collection, named in the error.
    ///   - allowingReserved: whether `_key`, the auto-assigned key's column, is allowed.
    /// - Throws: ``StorageError`` with code `.invalidIdentifier`.
    public static func validateColumn(_ name: String, in collection: String, allowingReserved: Bool = false) throws {
        if let problem = columnProblem(with: name) {
            throw StorageError(
                .invalidIdentifier,
                "invalid column name \(quoted(name)): \(problem)",
                collection: collection,
                column: name
            )
        }
        if !allowingReserved && name == CollectionSchema.autoKeyColumn {
            throw StorageError(
                .invalidIdentifier,
                "column name '\(name)' is reserved for auto-assigned keys",
                collection: collection
            )
        }
    }

    private static func columnProblem(with name: String) -> String? {
        if name.isEmpty { return "a name may not be empty" }
        if name.utf8.count > maximumColumnBytes {
            return "a column name may have at most \(maximumColumnBytes) UTF-8 bytes, this one has \(name.utf8.count)"
        }
        if name.utf8.contains(0) { return "a name may not contain NUL" }
        return nil
    }

    private static func problem(with name: String) -> String? {
        if name.isEmpty { return "a name may not be empty" }
        if name.unicodeScalars.count > maximumLength { return "a name may have at most \(maximumLength) characters" }
        if name.lowercased().hasPrefix("sqlite_") { return "names starting with 'sqlite_' are reserved" }
        for scalar in name.unicodeScalars {
            let allowed =
                scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                || scalar == "_" || scalar == "-" || scalar == "."
            if !allowed {
                return "character \(scalar.escaped(asASCII: true)) is not allowed"
                    + " (only letters, digits, '_', '-' and '.')"
            }
        }
        return nil
    }

    /// The name with ASCII letters lower-cased: two names are the same identifier when their
    /// folded forms are equal, as in SQLite (which folds ASCII letters only).
    /// - Parameter name: a collection or column name.
    /// - Returns: the name with `A`–`Z` replaced by `a`–`z`.
    public static func folded(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) else { return name }
        // Written in place: mapping to an array first allocated twice per call, and collection
        // names are folded on every look-up of a collection.
        return String(unsafeUninitializedCapacity: name.utf8.count) { buffer in
            var count = 0
            for byte in name.utf8 {
                buffer[count] = byte >= 65 && byte <= 90 ? byte + 32 : byte
                count += 1
            }
            return count
        }
    }

    /// Whether two names that are the same name (equal once `folded`) are also spelt alike,
    /// byte for byte.
    /// - Parameters:
    ///   - lhs: a name.
    ///   - rhs: a name equal to it once folded.
    /// - Returns: whether their UTF-8 bytes are the same.
    public static func spelledAlike(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// The name for a message that names two spellings of one name: `quoted(_:)`, followed by its
    /// Unicode scalars escaped when it has any beyond ASCII (`'café' (caf\u{E9})`), so that
    /// spellings differing only in normalization can be told apart.
    /// - Parameter name: any name.
    /// - Returns: the quoted name, with its escaped scalars when they are not all ASCII.
    public static func spelling(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 0x80 }) else { return quoted(name) }
        let scalars = name.unicodeScalars.prefix(40).map { $0.escaped(asASCII: true) }.joined()
        return quoted(name) + " (" + scalars + (name.unicodeScalars.count > 40 ? "…" : "") + ")"
    }

    /// The name for an error message: shortened, with quotes, backslashes, control characters,
    /// spaces and invisible format characters (right-to-left marks) escaped, so a message always
    /// shows where a name starts and ends.
    /// - Parameter name: any name, valid or not.
    /// - Returns: the name in single quotes, at most 40 characters of it.
    public static func quoted(_ name: String) -> String {
        let prefix = name.unicodeScalars.prefix(40).map { scalar -> String in
            switch scalar.properties.generalCategory {
            case .spaceSeparator, .format, .lineSeparator, .paragraphSeparator, .control:
                return scalar.escaped(asASCII: true)
            default:
                return scalar == "'" ? "\\'" : scalar.escaped(asASCII: false)
            }
        }.joined()
        return "'" + prefix + (name.unicodeScalars.count > 40 ? "…" : "") + "'"
    }
}
