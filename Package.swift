// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Earshot",
    products: [
        .executable(name: "earshot", targets: ["earshot"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // libpipewire-0.3 headers and link flags, found through pkg-config.
        .systemLibrary(
            name: "CPipeWire",
            pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev", "libspa-0.2-dev"])]
        ),
        // CPipeWire_* wrappers for the macros and static inlines Swift cannot import.
        .target(name: "CPipeWireShims", dependencies: ["CPipeWire"]),
        // The only Swift module that imports C.
        .target(name: "PipeWireClient", dependencies: ["CPipeWire", "CPipeWireShims", "AudioGraph"], swiftSettings: strict),
        .target(name: "AudioGraph", swiftSettings: strict),
        .target(name: "RoutingPolicy", dependencies: ["AudioGraph", "TOMLKit"], swiftSettings: strict),
        .target(
            name: "EarshotCommands",
            dependencies: [
                "AudioGraph", "PipeWireClient", "RoutingPolicy",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "earshot", dependencies: ["EarshotCommands"], swiftSettings: strict),
        .target(name: "PipeWireTestSupport", dependencies: ["PipeWireClient", "AudioGraph"], swiftSettings: strict),
        .testTarget(name: "AudioGraphTests", dependencies: ["AudioGraph"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "PipeWireClientTests", dependencies: ["PipeWireClient", "PipeWireTestSupport", "AudioGraph"], swiftSettings: strict),
        .testTarget(name: "RoutingPolicyTests", dependencies: ["RoutingPolicy", "AudioGraph"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "EarshotCommandsTests", dependencies: ["EarshotCommands", "PipeWireTestSupport", "AudioGraph"], swiftSettings: strict),
    ]
)
