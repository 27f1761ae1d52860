import Foundation
import Storage
import Testing

extension ConformanceSuite {
    static let concurrencyChecks: [ConformanceCheck] = [
        check("many threads share one store without losing a write") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let threads = 8
            let steps = 60
            let failures = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                do {
                    for step in 0..<steps {
                        let id = Int64(thread * 1_000 + step)
                        try store.save(Counter(id: id, thread: thread, step: step))
                        guard try store.fetch(Counter.self, id: id)?.step == step else {
                            failures.withLock { $0.append("thread \(thread) lost its write \(step)") }
                            return
                        }
                        if step % 10 == 0 {
                            _ = try store.fetchAll(Counter.self, where: Column("thread") == thread)
                            try store.transaction { tx in
                                try tx.save(Counter(id: id + 500, thread: thread, step: -1))
                                try tx.delete(Counter.self, id: id + 500)
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(thread): \(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            #expect(try store.count(Counter.self) == threads * steps)
            for thread in 0..<threads {
                #expect(try store.count(Counter.self, where: Column("thread") == thread) == steps)
            }
        },
        check("batches from separate threads all land") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let done = DispatchSemaphore(value: 0)
            let failures = Locked(0)
            for worker in 0..<6 {
                Thread {
                    defer { done.signal() }
                    do {
                        let batch = (0..<50).map { Counter(id: Int64(worker * 100 + $0), thread: worker, step: $0) }
                        try store.save(contentsOf: batch)
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }.start()
            }
            for _ in 0..<6 { done.wait() }
            #expect(failures.withLock { $0 } == 0)
            #expect(try store.count(Counter.self) == 300)
        },
    ]
}
