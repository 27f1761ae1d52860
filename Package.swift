// swift-tools-version: 6.0
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-storage",
    // Apple platforms: the versions that have Duration and ContinuousClock. Linux needs none.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Storage", targets: ["Storage"]),
        .library(name: "SQLiteBackend", targets: ["SQLiteBackend"]),
        .library(name: "FileArchiveBackend", targets: ["FileArchiveBackend"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "Storage", swiftSettings: upcoming),
        .target(name: "SQLiteBackend", dependencies: ["Storage", "CSQLite"], swiftSettings: upcoming),
        .target(name: "FileArchiveBackend", dependencies: ["Storage"], swiftSettings: upcoming),
        .target(name: "StorageTestSupport", dependencies: ["Storage"], swiftSettings: upcoming),
        .executableTarget(
            name: "Benchmarks",
            dependencies: ["Storage", "SQLiteBackend", "FileArchiveBackend", "CSQLite"],
            path: "Benchmarks",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "StorageCrashWriter",
            dependencies: ["Storage", "SQLiteBackend", "FileArchiveBackend", "StorageTestSupport"],
            swiftSettings: upcoming
        ),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "StorageTestSupport"], swiftSettings: upcoming),
        .testTarget(
            name: "SQLiteBackendTests",
            dependencies: ["SQLiteBackend", "Storage", "StorageTestSupport", "CSQLite"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "FileArchiveBackendTests",
            dependencies: ["FileArchiveBackend", "Storage", "StorageTestSupport"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["Storage", "SQLiteBackend", "FileArchiveBackend", "StorageTestSupport"],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
