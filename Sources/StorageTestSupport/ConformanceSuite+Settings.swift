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
            let reader = try SharedSettings(store: try fixture.openStore(in: directory))
            let writer = try SharedSettings(store: try fixture.openStore(in: directory))
            #expect(reader.theme == "light")
            #expect(reader.theme == "light")  // served from the reader's cache
            writer.theme = "dark"
            #expect(reader.theme == "dark")
            try writer.$theme.reset()
            #expect(reader.theme == "light")
        }
    ]
}
