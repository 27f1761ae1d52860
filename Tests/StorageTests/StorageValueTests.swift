import Storage
import Testing

@Suite struct StorageValueTests {
    @Test func affinityConvertsLikeSQLite() {
        #expect(StorageValue.text("42").applyingAffinity(.integer) == .integer(42))
        #expect(StorageValue.text(" 4.5 ").applyingAffinity(.integer) == .real(4.5))
        #expect(StorageValue.real(3.0).applyingAffinity(.integer) == .integer(3))
        #expect(StorageValue.integer(3).applyingAffinity(.real) == .real(3))
        #expect(StorageValue.integer(3).applyingAffinity(.text) == .text("3"))
        #expect(StorageValue.real(2.5).applyingAffinity(.text) == .text("2.5"))
        #expect(StorageValue.real(2).applyingAffinity(.text) == .text("2.0"))
        #expect(StorageValue.text("0x10").applyingAffinity(.integer) == .text("0x10"))
        #expect(StorageValue.text("inf").applyingAffinity(.real) == .text("inf"))
        #expect(StorageValue.text("abc").applyingAffinity(.integer) == .text("abc"))
        #expect(StorageValue.integer(3).applyingAffinity(.untyped) == .integer(3))
    }

    @Test func largeIntegersCompareExactlyWithReals() {
        let big = Int64.max
        #expect(StorageValue.compare(.integer(big), .real(9_223_372_036_854_775_807.0)) < 0)
        #expect(StorageValue.compare(.integer(1), .real(1.0)) == 0)
        #expect(StorageValue.compare(.real(-0.5), .integer(0)) < 0)
    }

    @Test func keyConversions() {
        #expect(42.storageValue == .integer(42))
        #expect("x".storageValue == .text("x"))
        #expect(Optional<Int>.none.storageValue == .null)
        #expect(true.storageValue == .integer(1))
    }
}
