// swift-tools-version: 6.0
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-storage",
    // Apple platforms: the versions that have Synchronization's Atomic, which the store and every
    // engine use (scripts/platform-check.py checks in CI that nothing newer is used unguarded).
    // Linux needs none.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Storage", targets: ["Storage"]),
        .library(name: "SQLiteBackend", targets: ["SQLiteBackend"]),
        .library(name: "FileArchiveBackend", targets: ["FileArchiveBackend"]),
        .library(name: "LMDBBackend", targets: ["LMDBBackend"]),
        .library(name: "PostgreSQLBackend", targets: ["PostgreSQLBackend"]),
        // The conformance suite, for the tests of backends written in other packages.
        .library(name: "StorageTestSupport", targets: ["StorageTestSupport"]),
        // The command-line tool: `swift run storage info app.sqlite`.
        .executable(name: "storage", targets: ["StorageCLI"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .systemLibrary(
            name: "CPostgreSQL",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(name: "Storage", swiftSettings: upcoming),
        .target(name: "SQLiteBackend", dependencies: ["Storage", "CSQLite"], swiftSettings: upcoming),
        .target(name: "FileArchiveBackend", dependencies: ["Storage"], swiftSettings: upcoming),
        .target(name: "LMDBBackend", dependencies: ["Storage", "CLMDB"], swiftSettings: upcoming),
        .target(name: "PostgreSQLBackend", dependencies: ["Storage", "CPostgreSQL"], swiftSettings: upcoming),
        .target(name: "StorageTestSupport", dependencies: ["Storage"], swiftSettings: upcoming),
        .target(
            name: "StorageTestBackends",
            dependencies: [
                "Storage", "SQLiteBackend", "LMDBBackend", "FileArchiveBackend", "PostgreSQLBackend",
                "StorageTestSupport",
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "Storage", "SQLiteBackend", "CSQLite", "LMDBBackend", "CLMDB", "FileArchiveBackend",
                "PostgreSQLBackend",
                "CPostgreSQL",
            ],
            path: "Benchmarks",
            swiftSettings: upcoming
        ),
        .target(
            name: "StorageCommandLine",
            dependencies: ["Storage", "SQLiteBackend", "LMDBBackend", "FileArchiveBackend", "PostgreSQLBackend"],
            swiftSettings: upcoming
        ),
        .executableTarget(name: "StorageCLI", dependencies: ["StorageCommandLine"], swiftSettings: upcoming),
        // The saves and look-ups whose counts CI holds to thresholds (scripts/count-check.py).
        .executableTarget(
            name: "StorageCounts",
            dependencies: ["Storage", "SQLiteBackend", "LMDBBackend"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "StorageCrashWriter",
            dependencies: ["Storage", "StorageTestSupport", "StorageTestBackends", "LMDBBackend", "PostgreSQLBackend"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "StorageFaultWriter",
            dependencies: [
                "Storage", "SQLiteBackend", "LMDBBackend", "FileArchiveBackend", "StorageTestSupport",
                "StorageTestBackends",
            ],
            swiftSettings: upcoming
        ),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "StorageTestSupport"], swiftSettings: upcoming),
        .testTarget(
            name: "SQLiteBackendTests",
            dependencies: ["SQLiteBackend", "Storage", "StorageTestSupport", "CSQLite"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "PostgreSQLBackendTests",
            dependencies: [
                "PostgreSQLBackend", "Storage", "StorageTestSupport", "StorageTestBackends", "CPostgreSQL",
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "FileArchiveBackendTests",
            dependencies: ["FileArchiveBackend", "Storage", "StorageTestSupport"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "LMDBBackendTests",
            dependencies: ["LMDBBackend", "SQLiteBackend", "Storage", "StorageTestSupport", "CLMDB"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "Storage", "SQLiteBackend", "LMDBBackend", "FileArchiveBackend", "StorageTestSupport",
                "StorageTestBackends",
            ],
            swiftSettings: upcoming
        ),
        // The Swift code of the DocC articles, compiled (scripts/docs-snippets.py extracts it).
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["Storage", "SQLiteBackend", "PostgreSQLBackend", "StorageTestSupport"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StorageCopyTests",
            dependencies: ["Storage", "StorageTestSupport", "StorageTestBackends"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StorageCommandLineTests",
            dependencies: ["StorageCommandLine", "Storage", "StorageTestSupport", "StorageTestBackends"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "Storage", "SQLiteBackend", "LMDBBackend", "FileArchiveBackend", "StorageTestSupport",
                "StorageTestBackends", "CSQLite", "CLMDB",
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
