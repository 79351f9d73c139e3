// swift-tools-version: 6.0
import PackageDescription

// Extension members (such as Foundation's on String) only where a file imports their module: a file
// cannot use Foundation by way of another file's import, so the binary links no Foundation.
let essentials: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "audio-policyd",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "audio-policyd", targets: ["audio-policyd"]),
        // The daemon alone (what `audio-policyd run` and the systemd unit run): no argument parser, no tools.
        .executable(name: "audio-policyd-daemon", targets: ["audio-policyd-daemon"]),
        .library(name: "AudioPolicy", targets: ["AudioPolicy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // libpulse's API through trampolines that load libpulse at its first call (scripts/generate-pulse-trampolines):
        // the package links no libpulse, so the daemon in ALSA mode never maps it.
        .target(name: "CPulse"),
        // libdbus-1 headers, found with pkg-config: MPRIS players and our own Now Playing player.
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // libxcb headers, found with pkg-config: which window has focus on an X11 display.
        .systemLibrary(
            name: "CXCB",
            pkgConfig: "xcb",
            providers: [.apt(["libxcb1-dev"])]
        ),
        // The pure engine: policy, decisions, fixtures. No C, no I/O, no clock.
        .target(
            name: "AudioPolicy",
            dependencies: [.product(name: "TOMLKit", package: "TOMLKit")],
            resources: [],
            swiftSettings: essentials
        ),
        // What FoundationEssentials lacks and the shell needs (printf formatting, path strings, a condition
        // variable): nothing links Foundation, which would load ICU into the daemon.
        .target(name: "FoundationGaps", swiftSettings: essentials),
        // The event loop in C: libpulse's main-loop interface over ppoll, and signals through a pipe.
        .target(name: "CMainLoop"),
        // The one thread's event loop over it: timers, descriptor watches, signals.
        .target(name: "EventLoop", dependencies: ["CMainLoop", "CPulse"], swiftSettings: essentials),
        // The seam every sound backend implements: the StreamServer protocol (with SavedLevels, the I/O of a
        // server's saved levels), its news and typed values (streams, outputs, captures, saved entries) and
        // meters. No C module, no libpulse type, no event loop (scripts/check-backend-seam).
        .target(name: "SoundBackend", dependencies: ["AudioPolicy"], swiftSettings: essentials),
        // PulseAudio and pipewire-pulse through libpulse: stream snapshots in, volume/mute/stream-restore writes
        // out, peak meters recording a sink input's monitor.
        .target(name: "PulseBackend", dependencies: ["AudioPolicy", "SoundBackend", "CPulse", "EventLoop",
                                                     .product(name: "Logging", package: "swift-log")],
                swiftSettings: essentials),
        // No sound server: the daemon's side of the ALSA plugin (Sources/CAudioPolicyALSAPlugin), one
        // connection per client PCM on a socket of its own, as a StreamServer.
        .target(name: "ALSABackend", dependencies: ["AudioPolicy", "SoundBackend", "EventLoop", "FoundationGaps"],
                swiftSettings: essentials),
        // The D-Bus session bus on the event loop: MPRIS players followed, our own Now Playing player served.
        .target(name: "SessionBus", dependencies: ["CDBus", "EventLoop", "FoundationGaps"], swiftSettings: essentials),
        // The control socket's JSON-lines protocol: requests, replies, events, status, the client and the server.
        .target(name: "ControlProtocol", dependencies: ["AudioPolicy", "FoundationGaps"], swiftSettings: essentials),
        // The imperative shell: wires engine, sound server, session bus and control socket; ramps, journal, service.
        .target(
            name: "AudioPolicyDaemon",
            dependencies: [
                "AudioPolicy", "EventLoop", "SoundBackend", "PulseBackend", "ALSABackend", "SessionBus", "ControlProtocol",
                "FoundationGaps", "CXCB", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: essentials
        ),
        // Clients of the daemon, through the libraries' public interfaces only: `top`, the benchmarks, the soak.
        .target(
            name: "AudioPolicyTools",
            dependencies: ["AudioPolicy", "AudioPolicyDaemon", "EventLoop", "SoundBackend", "PulseBackend", "SessionBus", "ControlProtocol",
                           "CPulse", "ALSABackend", "FoundationGaps", .product(name: "Logging", package: "swift-log")],
            swiftSettings: essentials
        ),
        .executableTarget(
            name: "audio-policyd",
            dependencies: [
                "AudioPolicy",
                "AudioPolicyDaemon",
                "AudioPolicyTools",
                "ALSABackend",
                "EventLoop",
                "ControlProtocol",
                "FoundationGaps",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: essentials
        ),
        // `audio-policyd run` without the rest of the command line: the running daemon maps only what it runs.
        .executableTarget(
            name: "audio-policyd-daemon",
            dependencies: ["AudioPolicyDaemon", "FoundationGaps"],
            swiftSettings: essentials
        ),
        // The fuzzers' seeded generator and settings (FUZZ_SEED, FUZZ_SCALE), shared by the test targets.
        .target(name: "Fuzzing", dependencies: ["AudioPolicy"], path: "Tests/Fuzzing"),
        // A test's needs from the machine: skipped on a laptop that lacks them, failed in CI (Requirement.swift).
        .target(name: "TestRequirements", path: "Tests/Requirements"),
        .testTarget(name: "AudioPolicyTests", dependencies: ["AudioPolicy", "Fuzzing", "TestRequirements"]),
        .testTarget(name: "IntegrationTests", dependencies: [
            "AudioPolicy", "AudioPolicyDaemon", "AudioPolicyTools", "EventLoop", "SoundBackend", "PulseBackend", "SessionBus",
            "ControlProtocol", "FoundationGaps", "Fuzzing", "TestRequirements",
        ]),
        // The shell's pure parts, no server or bus: journal, systemd notification, `top` screen, main loop, MPRIS
        // matching and messages, and actuation and recovery against a fake sound server.
        .testTarget(name: "AudioPolicyDaemonTests", dependencies: [
            "AudioPolicy", "AudioPolicyDaemon", "AudioPolicyTools", "EventLoop", "SoundBackend", "PulseBackend", "ALSABackend",
            "SessionBus", "ControlProtocol", "FoundationGaps", "CPulse", "CMainLoop",
        ]),
    ]
)
