import Foundation
import Storage
import Testing

/// The settings a check writes through one store and reads through another.
final class SharedSettings: Settings, @unchecked Sendable {
    @Setting var theme = "light"
}

extension ConformanceSuite {
    static let settingsChecks: [ConformanceCheck] = [
        check("a settings read sees a commit made through another store on the same data") { fixture, directory in
            // Two stores, as two processes (or two parts of one app) would open them: each has a
            // settings cache of its own, which the backend's `ExternalCommitCounter` keeps honest.
            // A server backend (`ExternalCommitSource`) tells of other commits a moment after they
            // commit, from a thread of its own: its reads are awaited for up to ten seconds.
            let readerStore = try fixture.openStore(in: directory)
            let notified = readerStore.isNotifiedOfCommitsElsewhere
            let reader = try SharedSettings(store: readerStore)
            let writer = try SharedSettings(store: try fixture.openStore(in: directory))
            func reads(_ expected: String) -> Bool {
                guard notified else { return reader.theme == expected }
                for _ in 0..<1_000 where reader.theme != expected { usleep(10_000) }
                return reader.theme == expected
            }
            #expect(reader.theme == "light")
            #expect(reader.theme == "light")  // served from the reader's cache
            writer.theme = "dark"
            #expect(reads("dark"))
            try writer.$theme.reset()
            #expect(reads("light"))
        }
    ]
}
