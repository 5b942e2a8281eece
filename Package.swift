// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// libpipewire's headers. pkg-config would add -D_REENTRANT, which SwiftPM rejects with a
// warning on every build, so the two include directories are named here instead
// (Debian/Ubuntu/Fedora layout; set PIPEWIRE_PREFIX for another prefix).
let pipewirePrefix = Context.environment["PIPEWIRE_PREFIX"] ?? "/usr"
let pipewireIncludes = ["\(pipewirePrefix)/include/pipewire-0.3", "\(pipewirePrefix)/include/spa-0.2"]
let pipewireCFlags: [CSetting] = [.unsafeFlags(pipewireIncludes.map { "-I\($0)" })]
let pipewireSwiftFlags: [SwiftSetting] = [.unsafeFlags(pipewireIncludes.flatMap { ["-Xcc", "-I\($0)"] })]

// How the two executables are linked (measured in docs/performance.md, "Linking and late
// binding"): --no-export-dynamic. The static Swift runtime's link arguments
// (static-stdlib-args.lnk) ask for --export-dynamic, which put our 18 000 symbols (1.1 MB of
// .dynsym, .dynstr, .gnu.hash) in each file, read at every start (dladdr scans them) and resident
// in the daemon; nothing loads code into these programs that would need them: -1.4 MB of daemon
// RSS. (Packed relative relocations would save 1.2 MB more, but gold cannot pack them and GNU ld
// then makes no RELRO segment, Swift's .rodata being writable: not taken.)
let executableLinking: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--no-export-dynamic"])]
// What links libpipewire-0.3 and libsystemd itself: the daemon, the bench and the tests. The
// client does not (CEarshotLateBinding).
let linksLibraries: [LinkerSetting] = [.linkedLibrary("pipewire-0.3"), .linkedLibrary("systemd")]

let package = Package(
    name: "Earshot",
    products: [
        // The client: commands, eval, config, record, driver decode. Links nothing of the daemon.
        .executable(name: "earshot", targets: ["earshot"]),
        // The daemon (installed as /usr/libexec/earshotd; `earshot daemon` runs it).
        .executable(name: "earshotd", targets: ["earshotd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // FileDescriptor, Errno, Stat: typed doors to the POSIX calls SystemBridge makes.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // libpipewire-0.3's headers (apt: libpipewire-0.3-dev libspa-0.2-dev). Linking is said
        // per executable (`linksLibraries`): the client binds the library late instead.
        .systemLibrary(name: "CPipeWire"),
        // CPipeWire_* wrappers for the macros and static inlines Swift cannot import.
        .target(name: "CPipeWireShims", dependencies: ["CPipeWire"], cSettings: pipewireCFlags),
        // sd-bus's headers from libsystemd (apt: libsystemd-dev); linked as libpipewire is.
        .systemLibrary(name: "CSystemdBus"),
        // The client's stand-in for both libraries: their functions, each loading its library
        // on first use (dlopen), so that a client command maps neither (late-binding.c says why).
        .target(name: "CEarshotLateBinding", dependencies: ["CPipeWire", "CSystemdBus"], cSettings: pipewireCFlags),
        // CEarshotLinux_* wrappers for the Linux calls, macros and structs swift-system does not
        // cover (inotify, eventfd, SO_PEERCRED's struct ucred), one per macro or inline.
        .target(name: "CEarshotLinux"),
        // The only Swift module that imports C: PipeWire (PipeWire/), D-Bus (DBus/) and the
        // Linux system calls (Linux/: files, sockets, signals, file watching).
        .target(
            name: "SystemBridge",
            dependencies: [
                "CPipeWire", "CPipeWireShims", "CSystemdBus", "CEarshotLinux", "AudioGraph",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict + pipewireSwiftFlags),
        .target(name: "AudioGraph", dependencies: [.product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // One declaration per outward field (JSON key, type, doc line, D-Bus signature): the
        // Codable, the D-Bus arguments and the docs' tables come from it. Depends on nothing.
        .target(name: "WireFields", swiftSettings: strict),
        .target(name: "RoutingPolicy", dependencies: ["AudioGraph", "WireFields", "TOMLKit"], swiftSettings: strict),
        // `earshot eval`: scripts, runs, expectations, diffs, the timeline and its SVG, the
        // replay workloads. Only the client links it: the daemon carries no SVG renderer.
        .target(name: "PolicyEval", dependencies: ["AudioGraph", "RoutingPolicy", "WireFields"], swiftSettings: strict),
        .target(name: "AccessoryDrivers", dependencies: ["RoutingPolicy"], swiftSettings: strict),
        // What the client and the daemon share: the control protocol's wire types and their
        // JSON, the client side of the socket, the report bridge's session, recordings' files.
        // Nothing of the daemon: the `earshot` client links this, not EarshotDaemon.
        .target(
            name: "ControlProtocol",
            dependencies: ["AudioGraph", "RoutingPolicy", "WireFields", "SystemBridge", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // The live engine: glue between PipeWire, the policy, the control API and the disk.
        .target(
            name: "EarshotDaemon",
            dependencies: [
                "AudioGraph", "SystemBridge", "RoutingPolicy", "AccessoryDrivers", "ControlProtocol", "WireFields",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        // The daemon's command line, parsed by both executables (`earshot daemon` checks it,
        // `earshotd` runs it).
        .target(
            name: "DaemonArguments",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        .target(
            name: "EarshotCommands",
            dependencies: [
                "AudioGraph", "SystemBridge", "RoutingPolicy", "PolicyEval", "AccessoryDrivers", "ControlProtocol", "DaemonArguments", "WireFields",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict,
            // EarshotVersion.current, generated from the VERSION file.
            plugins: ["EarshotVersionPlugin"]
        ),
        // The version, from one place: VERSION at the root, read at build time by this plugin
        // (VERSION is its input file, so a changed VERSION is rebuilt without a clean build).
        .executableTarget(name: "EarshotVersionGenerator", swiftSettings: strict),
        .plugin(name: "EarshotVersionPlugin", capability: .buildTool(), dependencies: ["EarshotVersionGenerator"]),
        .executableTarget(name: "earshot", dependencies: ["EarshotCommands", "CEarshotLateBinding"], swiftSettings: strict, linkerSettings: executableLinking),
        .executableTarget(
            name: "earshotd",
            dependencies: [
                "EarshotDaemon", "ControlProtocol", "DaemonArguments",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict, linkerSettings: executableLinking + linksLibraries, plugins: ["EarshotVersionPlugin"]),
        // scripts/bench switch: switch latency, gaps, RSS and idle CPU on a private PipeWire.
        .executableTarget(
            name: "earshot-bench", dependencies: ["SystemBridge", "PipeWireTestSupport", "AudioGraph", "EarshotDaemon", "ControlProtocol", "WireFields"],
            path: "Sources/EarshotBench", swiftSettings: strict, linkerSettings: linksLibraries),
        // Tests' stand-in for an ALSA card: a C PipeWire client exporting an Audio/Device with
        // EnumRoute/Route/EnumProfile/Profile params whose availability a test toggles, plus
        // its sink nodes (PipeWireTestSupport's RouteDevice runs it).
        .executableTarget(
            name: "earshot-route-device", dependencies: ["CPipeWire"], path: "Sources/earshot-route-device",
            cSettings: pipewireCFlags + [.unsafeFlags(["-Wall"])],
            // The module map's `link` reaches Swift importers only; C files need it said here.
            linkerSettings: [.linkedLibrary("pipewire-0.3")]),
        // Every test target that reaches SystemBridge links this, and so the two libraries.
        .target(
            name: "PipeWireTestSupport",
            dependencies: [
                "SystemBridge", "AudioGraph", "EarshotDaemon", "RoutingPolicy", "ControlProtocol", "WireFields",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict,
            linkerSettings: linksLibraries),
        // The `.blockingCalls` trait: test bodies that block run off the cooperative pool.
        .target(name: "TestScheduling", dependencies: ["PipeWireTestSupport"], swiftSettings: strict),
        .testTarget(name: "AudioGraphTests", dependencies: ["AudioGraph"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "SystemBridgeTests", dependencies: ["SystemBridge", "PipeWireTestSupport", "TestScheduling", "AudioGraph"], swiftSettings: strict),
        .testTarget(name: "AccessoryDriversTests", dependencies: ["WireFields", "AccessoryDrivers", "RoutingPolicy"], swiftSettings: strict),
        .testTarget(name: "RoutingPolicyTests", dependencies: ["WireFields", "PolicyEval", "RoutingPolicy", "AudioGraph"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(
            name: "EarshotDaemonTests", dependencies: ["WireFields", "PolicyEval", "EarshotDaemon", "ControlProtocol", "AccessoryDrivers", "RoutingPolicy", "AudioGraph", "PipeWireTestSupport", "TestScheduling", "SystemBridge"],
            resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "EarshotCommandsTests", dependencies: ["WireFields", "PolicyEval", "EarshotCommands", "ControlProtocol", "EarshotDaemon", "AccessoryDrivers", "RoutingPolicy", "SystemBridge", "PipeWireTestSupport", "TestScheduling", "AudioGraph"], swiftSettings: strict),
    ]
)
