import Foundation
import Storage
import Testing

/// How a field inside JSON text reads (what every backend but SQLite uses, and what SQLite's
/// `json_extract` gives): by hand, for documents whose answer is known.
@Suite struct NestedFieldTests {
    /// The value the ordering by the field at `path` sorts `json` by.
    func field(_ json: StorageValue, _ path: String...) -> StorageValue {
        var ordering = Ordering(column: "c")
        ordering.path = path
        return ordering.value(from: json)
    }

    @Test func scalarsReadAsSQLiteReadsThem() {
        #expect(field(#"{"a":1}"#, "a") == .integer(1))
        #expect(field(#"{"a":-0}"#, "a") == .integer(0))
        #expect(field(#"{"a":1.0}"#, "a") == .real(1))
        #expect(field(#"{"a":1e2}"#, "a") == .real(100))
        #expect(field(#"{"a":12345678901234567890}"#, "a") == .real(Double("12345678901234567890")!))
        #expect(field(#"{"a":true}"#, "a") == .integer(1))
        #expect(field(#"{"a":false}"#, "a") == .integer(0))
        #expect(field(#"{"a":null}"#, "a") == .null)
        #expect(field(#"{"a":"x\"\\\/\n\u00e9\ud83d\ude00"}"#, "a") == .text("x\"\\/\né😀"))
    }

    @Test func objectsAndArraysReadAsTheirJSONWithoutWhitespace() {
        #expect(field(#" { "a" : { "b" : [ 1 , "x y" ] } } "#, "a") == .text(#"{"b":[1,"x y"]}"#))
        #expect(field(#"{"a":{"b":{"c":[]}}}"#, "a", "b") == .text(#"{"c":[]}"#))
        #expect(field(#"{"a":[1,2]}"#, "a") == .text("[1,2]"))
    }

    @Test func pathsFollowObjectMembersOnly() {
        #expect(field(#"{"a":{"b":2}}"#, "a", "b") == .integer(2))
        #expect(field(#"{"a":[{"b":2}]}"#, "a", "b") == .null)
        #expect(field(#"{"a":1}"#, "a", "b") == .null)
        #expect(field(#"{"b":{"a":1},"a":{"b":3}}"#, "a", "b") == .integer(3))
        #expect(field(#"{"a.b":1,"a":{"b":2}}"#, "a.b") == .integer(1))
        // Of two members with one key, the first.
        #expect(field(#"{"a":1,"a":2}"#, "a") == .integer(1))
    }

    @Test func whatIsNotValidJSONTextReadsAsNull() {
        for text in [
            #"{"a":1"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#, "{\"a\":\"\t\"}", #"{"a":1}x"#, "",
        ] {
            #expect(field(.text(text), "a") == .null, "\(text)")
        }
        #expect(field(.integer(5), "a") == .null)
        #expect(field(.blob(Data(#"{"a":1}"#.utf8)), "a") == .null)
        // 2,000 levels with the outer object: the most SQLite takes.
        let deepest = String(repeating: "[", count: 1_998) + #"{"a":1}"# + String(repeating: "]", count: 1_998)
        #expect(field(.text(#"{"b":"# + deepest + #","a":2}"#), "a") == .integer(2))
        let tooDeep = String(repeating: "[", count: 2_000) + String(repeating: "]", count: 2_000)
        #expect(field(.text(#"{"b":"# + tooDeep + #","a":2}"#), "a") == .null)
    }

    @Test func columnsBuildNestedTerms() {
        #expect((Column("address", "city") == "Oslo") == .nested(path: ["city"], .compare("address", .equal, "Oslo")))
        #expect((Column("address", "city") == nil) == .nested(path: ["city"], .isNull("address")))
        #expect((Column("address", "city") != nil) == .not(.nested(path: ["city"], .isNull("address"))))
        #expect((Column("address") == "x") == .compare("address", .equal, "x"))
        #expect(Ordering.ascending(Column("address", "geo", "lat")).path == ["geo", "lat"])
        #expect(Ordering.descending(Column("age")) == .descending("age"))
    }
}
