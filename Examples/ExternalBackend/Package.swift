// swift-tools-version: 6.0
import PackageDescription

// A backend written outside swift-storage, with its public API only: the proof that the
// backend kit (the helpers in `Storage` and the `StorageTestSupport` product) is enough.
let package = Package(
    name: "ExternalBackend",
    // The platforms of swift-storage, which it depends on (a dependent may not declare older ones).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "DictionaryBackend", targets: ["DictionaryBackend"])
    ],
    dependencies: [
        // Named, since a path dependency is otherwise known by its folder's name.
        .package(name: "swift-storage", path: "../..")
    ],
    targets: [
        .target(
            name: "DictionaryBackend",
            dependencies: [.product(name: "Storage", package: "swift-storage")]
        ),
        .testTarget(
            name: "DictionaryBackendTests",
            dependencies: [
                "DictionaryBackend",
                .product(name: "Storage", package: "swift-storage"),
                .product(name: "StorageTestSupport", package: "swift-storage"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
