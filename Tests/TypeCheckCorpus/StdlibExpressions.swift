// Ordinary code of an app that uses Storage in other files: the standard library's and
// Foundation's operators only (arithmetic, comparisons of Int, Int64, Double, String, Date and
// optionals, `&&` and `||`, ternaries, interpolation) in closures and conditions. It calls no
// Storage API, so scripts/typecheck-corpus.sh --times also type-checks it without the import:
// the difference is what importing Storage costs code that does not use it.
// typecheck-corpus: without-import
import Foundation
import Storage

struct Visit: Equatable, Sendable {
    var id: Int64
    var visitor: String
    var minutes: Int
    var spent: Double
    var coupon: String?
    var day: Date
    var returning: Bool
}

func summarize(_ visits: [Visit], since start: Date) -> String {
    let recent = visits.filter { $0.day >= start && $0.minutes > 5 || $0.returning && $0.coupon != nil }
    let long = recent.filter { $0.minutes * 60 > 3_600 && $0.spent < 100.0 || $0.visitor == "staff" }
    let revenue = recent.map { $0.spent * 1.2 - 0.5 }.reduce(0, +)
    let minutes = recent.reduce(0) { $0 + $1.minutes % 60 + ($1.returning ? 1 : 0) }
    let ranked = recent.sorted { $0.spent == $1.spent ? $0.id < $1.id : $0.spent > $1.spent }
    let ids = ranked.prefix(3).map { $0.id * 10 + Int64($0.minutes % 10) }
    let share = visits.isEmpty ? 0 : Double(recent.count) / Double(visits.count) * 100
    let coupons = recent.compactMap { $0.coupon }.filter { $0.hasPrefix("X") || $0.count > 4 && $0 != "NONE" }
    let label = share > 50 ? "busy" : share > 10 && revenue >= 1_000 ? "steady" : "quiet"
    return "\(label): \(long.count) long, \(minutes) min, \(ids), \(coupons.count) coupons, \(Int(revenue.rounded()))"
}

func validate(_ visit: Visit, now: Date) -> Bool {
    let fresh = visit.day <= now && now.timeIntervalSince(visit.day) < 30 * 24 * 3_600
    let plausible = visit.minutes >= 0 && visit.minutes < 24 * 60 && visit.spent >= 0 && !visit.spent.isNaN
    let named = !visit.visitor.isEmpty && visit.visitor.count <= 64 || visit.id == 0
    return fresh && plausible && named && (visit.coupon == nil || visit.coupon != "")
}

func buckets(_ visits: [Visit]) -> [Int: [Int64]] {
    var result: [Int: [Int64]] = [:]
    for visit in visits where visit.minutes > 0 && (visit.spent > 1 || visit.returning) {
        result[visit.minutes / 15 * 15, default: []].append(visit.id + 1)
    }
    return result.filter { $0.key >= 15 && $0.value.count > 1 || $0.key == 0 }
}
