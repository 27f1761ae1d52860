import Foundation
import Storage
import Testing

/// Typed settings on every backend.
struct SettingsChecks {
    struct Window: Codable, Equatable, Sendable {
        var width: Int
        var title: String
    }

    enum Theme: String, Codable, Sendable {
        case light, dark
    }

    final class AppSettings: Settings, @unchecked Sendable {
        @Setting var userName = "guest"
        @Setting var launchCount = 0
        @Setting var volume = 0.5
        @Setting var isMuted = false
        @Setting var lastLogin: Date? = nil
        @Setting var avatar = Data()
        @Setting var recent: [String] = []
        @Setting var limits: [String: Int] = [:]
        @Setting var window = Window(width: 800, title: "main")
        @Setting var theme = Theme.light
        @Setting("user_id") var userID: Int? = nil
    }

    /// The same namespace as `AppSettings`, with other defaults and another name for a key.
    final class NewerAppSettings: Settings {
        @Setting var launchCount = 10
        @Setting("userName") var name = "nobody"
    }

    /// Another subclass whose property names are the same as `AppSettings`'s.
    final class OtherSettings: Settings {
        @Setting var userName = "other"
    }

    final class ClashingSettings: Settings {
        @Setting var first = 1
        @Setting("first") var second = 2
    }

    /// Records what it is told about problems.
    final class ReportingSettings: Settings, @unchecked Sendable {
        @Setting var userName = 0
        let problems = ProblemLog()

        override func settingsProblem(_ problem: SettingsProblem) {
            problems.append(problem)
        }
    }

    final class ProblemLog: @unchecked Sendable {
        private let lock = NSLock()
        private var problems: [SettingsProblem] = []
        func append(_ problem: SettingsProblem) { lock.withLock { problems.append(problem) } }
        var all: [SettingsProblem] { lock.withLock { problems } }
    }

    /// Runs `body` with a fresh folder and a way to open (and reopen) the fixture's store in it.
    func withStore(_ fixture: BackendFixture, _ body: (() throws -> ObjectStore) async throws -> Void) async throws {
        let directory = try TemporaryDirectory("settings")
        defer { directory.remove() }
        try await body { try fixture.openStore(in: directory.url) }
    }

    func everyKindOfValueSurvivesAReopen(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            do {
                let settings = try AppSettings(store: try open())
                #expect(settings.userName == "guest")
                #expect(settings.window == Window(width: 800, title: "main"))
                settings.userName = "ann"
                settings.launchCount += 1
                settings.volume = 0.25
                settings.isMuted = true
                settings.lastLogin = Date(timeIntervalSince1970: 1_700_000_000.5)
                settings.avatar = Data([0, 1, 2, 255])
                settings.recent = ["a", "b"]
                settings.limits = ["x": 1, "y": 2]
                settings.window = Window(width: 1024, title: "big")
                settings.theme = .dark
                settings.userID = 42
            }
            let reopened = try AppSettings(store: try open())
            #expect(reopened.userName == "ann")
            #expect(reopened.launchCount == 1)
            #expect(reopened.volume == 0.25)
            #expect(reopened.isMuted == true)
            #expect(reopened.lastLogin == Date(timeIntervalSince1970: 1_700_000_000.5))
            #expect(reopened.avatar == Data([0, 1, 2, 255]))
            #expect(reopened.recent == ["a", "b"])
            #expect(reopened.limits == ["x": 1, "y": 2])
            #expect(reopened.window == Window(width: 1024, title: "big"))
            #expect(reopened.theme == .dark)
            #expect(reopened.userID == 42)
            #expect(reopened.$userID.key == "user_id")
        }
    }

    func defaultsAreDeclaredNotWritten(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            let old = try AppSettings(store: store)
            #expect(old.launchCount == 0)  // read, never written
            let newer = try NewerAppSettings(store: store, namespace: "AppSettings")
            #expect(newer.launchCount == 10)  // the new default, not the old one
            old.launchCount = 3
            #expect(newer.launchCount == 3)
            // Assigning nil removes the key; reset does too.
            old.userID = 5
            old.userID = nil
            #expect(old.userID == nil)
            try old.$launchCount.reset()
            #expect(newer.launchCount == 10)
            #expect(old.launchCount == 0)
        }
    }

    /// Two keys that differ only in Unicode normalization, as the keys of stored records do.
    final class SpelledSettings: Settings {
        @Setting("caf\u{E9}") var composed = 1
        @Setting("cafe\u{301}") var decomposed = 2
    }

    /// Each of the two keys alone, in the same namespace.
    final class ComposedSettings: Settings {
        @Setting("caf\u{E9}") var value = 1
    }

    final class DecomposedSettings: Settings {
        @Setting("cafe\u{301}") var value = 2
    }

    func keysDifferingOnlyInNormalizationAreTwoSettings(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            let composed = try ComposedSettings(store: store, namespace: "spelled")
            let decomposed = try DecomposedSettings(store: store, namespace: "spelled")
            composed.value = 5
            #expect(composed.value == 5)
            #expect(decomposed.value == 2)  // not the cached value of the other spelling
            decomposed.value = 7
            #expect(composed.value == 5)
            #expect(decomposed.value == 7)
            let both = try SpelledSettings(store: try open(), namespace: "spelled")
            #expect(both.composed == 5)
            #expect(both.decomposed == 7)
        }
    }

    func keysComeFromPropertyNamesAndNamespacesFromSubclasses(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            let app = try AppSettings(store: store)
            let other = try OtherSettings(store: store)
            app.userName = "ann"
            #expect(other.userName == "other")  // another namespace
            other.userName = "bob"
            #expect(app.userName == "ann")
            // `@Setting("userName") var name` reads the key `userName` of the same namespace.
            let renamed = try NewerAppSettings(store: store, namespace: "AppSettings")
            #expect(renamed.name == "ann")
            #expect(renamed.$name.key == "userName")
            #expect(app.namespace == "AppSettings")
            #expect(throws: StorageError.self) { try ClashingSettings(store: store) }
        }
    }

    func resetAllRemovesOnlyItsOwnNamespace(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            let app = try AppSettings(store: store)
            let other = try OtherSettings(store: store)
            app.userName = "ann"
            app.launchCount = 7
            other.userName = "bob"
            try app.resetAll()
            #expect(app.userName == "guest")
            #expect(app.launchCount == 0)
            #expect(other.userName == "bob")
            #expect(try AppSettings(store: try open()).launchCount == 0)
        }
    }

    func aValueOfAnOlderTypeReadsAsTheDefaultAndIsReported(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            try AppSettings(store: store).userName = "ann"  // a String
            let settings = try ReportingSettings(store: store, namespace: "AppSettings")
            #expect(settings.userName == 0)  // now an Int: the default
            #expect(settings.userName == 0)
            #expect(throws: StorageError.self) { try settings.$userName.get() }
            let problems = settings.problems.all
            #expect(problems.count == 1)  // once per bad value, not once per read
            #expect(problems.first?.key == "userName")
            #expect(problems.first?.error.code == .typeMismatch)
            if case .unreadableValue(let stored) = problems.first?.kind {
                #expect(stored == #""ann""#)
            } else {
                Issue.record("expected an unreadable value, got \(String(describing: problems.first))")
            }
            settings.userName = 3  // a new value of the new type replaces it
            #expect(settings.userName == 3)
        }
    }

    func changesArriveFromEveryInstanceOnTheStore(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            let reader = try AppSettings(store: store)
            var names = reader.$userName.changes.makeAsyncIterator()
            #expect(reader.userName == "guest")  // cached now
            let writer = try AppSettings(store: store)
            writer.userName = "ann"
            writer.launchCount = 1  // another key: not in this stream
            #expect(throws: CancellationError.self) {
                try store.transaction { _ in
                    writer.userName = "rolled back"
                    throw CancellationError()
                }
            }
            #expect(writer.userName == "ann")
            writer.userName = "bob"
            try writer.$userName.reset()
            #expect(await names.next() == "ann")
            #expect(await names.next() == "bob")
            #expect(await names.next() == "guest")
            #expect(reader.userName == "guest")
            writer.userName = "cy"
            #expect(reader.userName == "cy")  // the shared cache follows every commit
        }
    }

    func concurrentWritesFromManyTasks(_ fixture: BackendFixture) async throws {
        try await withStore(fixture) { open in
            let store = try open()
            let settings = try AppSettings(store: store)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<4 {
                    group.addTask {
                        for step in 0..<25 {
                            try settings.$launchCount.update { $0 += 1 }
                            settings.recent = ["task \(task) step \(step)"]
                            _ = settings.userName
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(settings.launchCount == 100)
            #expect(try AppSettings(store: try open()).launchCount == 100)
            #expect(settings.recent.count == 1)
            #expect(settings.recent.first?.hasSuffix("step 24") == true)
        }
    }
}

extension ConformanceSuite {
    static let settingsTierAsyncChecks: [ConformanceCheck] = [
        asyncCheck("every kind of value survives a reopen") { fixture, _ in
            try await SettingsChecks().everyKindOfValueSurvivesAReopen(fixture)
        },
        asyncCheck("defaults are declared not written") { fixture, _ in
            try await SettingsChecks().defaultsAreDeclaredNotWritten(fixture)
        },
        asyncCheck("keys differing only in normalization are two settings") { fixture, _ in
            try await SettingsChecks().keysDifferingOnlyInNormalizationAreTwoSettings(fixture)
        },
        asyncCheck("keys come from property names and namespaces from subclasses") { fixture, _ in
            try await SettingsChecks().keysComeFromPropertyNamesAndNamespacesFromSubclasses(fixture)
        },
        asyncCheck("reset all removes only its own namespace") { fixture, _ in
            try await SettingsChecks().resetAllRemovesOnlyItsOwnNamespace(fixture)
        },
        asyncCheck("a value of an older type reads as the default and is reported") { fixture, _ in
            try await SettingsChecks().aValueOfAnOlderTypeReadsAsTheDefaultAndIsReported(fixture)
        },
        asyncCheck("changes arrive from every instance on the store") { fixture, _ in
            try await SettingsChecks().changesArriveFromEveryInstanceOnTheStore(fixture)
        },
        asyncCheck("concurrent writes from many tasks") { fixture, _ in
            try await SettingsChecks().concurrentWritesFromManyTasks(fixture)
        },
    ]
}
