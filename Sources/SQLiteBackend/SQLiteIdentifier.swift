/// The one way an identifier reaches SQL text: double-quoted, with embedded quotes doubled.
///
/// `ObjectStore` validates names before they reach the backend, but the backend quotes every
/// identifier anyway, so no name can change the meaning of a statement. Values are never put in
/// SQL text; they are always bound.
func quote(_ identifier: String) -> String {
    var result = "\""
    result.reserveCapacity(identifier.utf8.count + 2)
    // By scalar, not by Character: a quote followed by a combining mark is one Character that
    // is not `"`, yet SQLite sees the quote byte.
    for scalar in identifier.unicodeScalars {
        if scalar == "\"" { result.unicodeScalars.append("\"") }
        result.unicodeScalars.append(scalar)
    }
    result.append("\"")
    return result
}
