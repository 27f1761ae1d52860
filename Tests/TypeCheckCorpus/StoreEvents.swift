// Store events as a user writes them (issue 37, item 4): a reporter with a handler counting
// kinds and doing arithmetic on durations, passed in a backend's configuration; the store's
// stream consumed in a task with a `where` clause, a switch over the kind and its fields.
import Foundation
import SQLiteBackend
import Storage
import Synchronization

final class EventCounts: Sendable {
    let retries = Atomic<Int>(0)
    let slowMilliseconds = Atomic<Int>(0)
}

func openWithEvents(_ path: String, counts: EventCounts) throws -> ObjectStore {
    let events = StoreEventReporter(slowStatementThreshold: .milliseconds(100)) { event in
        if event.kind == .retry, let attempt = event.attempt, attempt > 1 {
            counts.retries.wrappingAdd(1, ordering: .relaxed)
        }
        if let duration = event.duration {
            let milliseconds =
                duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
            counts.slowMilliseconds.wrappingAdd(Int(milliseconds), ordering: .relaxed)
        }
    }
    return try ObjectStore(backend: .sqlite(path: path, configuration: .init(busyTimeout: .seconds(2), events: events)))
}

func logEvents(of store: ObjectStore) async {
    let stream = store.events(bufferingNewest: 100)
    for await event in stream where event.kind != .connectionOpened {
        switch event.kind {
        case .retry, .conflict:
            print("run \(event.attempt ?? 0): \(event.reason ?? "?") \(event.code?.description ?? "")")
        case .slowStatement:
            print(event.duration ?? .zero, event.statement ?? "")
        case .mapGrown:
            print((event.size ?? 0) / (1 << 20), "MiB")
        default:
            print(event)
        }
        if stream.droppedCount > 10 { break }
    }
}

func watch(_ store: ObjectStore) -> Task<Void, Never> {
    Task { await logEvents(of: store) }
}
