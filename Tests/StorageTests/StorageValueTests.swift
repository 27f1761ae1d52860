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

@Suite struct StorageValueEqualityTests {
    let nfc = "caf\u{E9}"
    let nfd = "cafe\u{301}"

    @Test func textIsEqualByItsUTF8BytesNotByCanonicalEquivalence() {
        #expect(nfc == nfd)  // Swift's String says equal; the stored bytes differ
        #expect(StorageValue.text(nfc) != .text(nfd))
        #expect(Set<StorageValue>([.text(nfc), .text(nfd)]).count == 2)
        #expect(StorageKey(.text(nfc)) != StorageKey(.text(nfd)))
        #expect(Set([StorageKey(.text(nfc)), StorageKey(.text(nfd))]).count == 2)
        #expect(StorageValue.text("a") != .text("a "))
        #expect(StorageValue.text("a") != .text("A"))
    }

    @Test func realsAreEqualAsNumbersAndNaNEqualsItself() {
        #expect(StorageValue.real(-0.0) == .real(0.0))
        #expect(Set<StorageValue>([.real(-0.0), .real(0.0)]).count == 1)
        #expect(StorageValue.real(.nan) == .real(.nan))
        #expect(Set<StorageValue>([.real(.nan), .real(-.nan)]).count == 1)
        #expect(StorageValue.real(1.5) != .real(2.5))
    }

    @Test func anIntegerAndARealAreDifferentValuesButTheSameKey() {
        #expect(StorageValue.integer(1) != .real(1.0))
        #expect(StorageKey(.integer(1)) == StorageKey(.real(1.0)))
        #expect(
            Set([StorageKey(.integer(1)), StorageKey(.real(1.0)), StorageKey(.real(-0.0)), StorageKey(.integer(0))])
                .count == 2
        )
        #expect(StorageKey(.integer(Int64.max)) != StorageKey(.real(9_223_372_036_854_775_807.0)))
        #expect(StorageKey(.real(0.5)) != StorageKey(.integer(0)))
        #expect(StorageKey(.null) == StorageKey(.null))
        #expect(StorageKey(.null) != StorageKey(.integer(0)))
        #expect(StorageKey(.text("1")) != StorageKey(.integer(1)))
    }
}
