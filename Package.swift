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
        .library(name: "AudioPolicy", targets: ["AudioPolicy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // libpulse headers, found with pkg-config.
        .systemLibrary(
            name: "CPulse",
            pkgConfig: "libpulse",
            providers: [.apt(["libpulse-dev"])]
        ),
        // libdbus-1 headers, found with pkg-config: MPRIS players and our own Now Playing player.
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // The pure engine: policy, decisions, fixtures. No C, no I/O, no clock.
        .target(
            name: "AudioPolicy",
            dependencies: [.product(name: "TOMLKit", package: "TOMLKit")],
            resources: [],
            swiftSettings: essentials
        ),
        // The imperative shell: PulseAudio backend, control socket, ramps, wiring.
        .target(
            name: "AudioPolicyDaemon",
            dependencies: ["AudioPolicy", "CPulse", "CDBus", .product(name: "Logging", package: "swift-log")],
            swiftSettings: essentials
        ),
        // Clients of the daemon, through the daemon library's public interface only: `top`, the benchmarks.
        .target(
            name: "AudioPolicyTools",
            dependencies: ["AudioPolicy", "AudioPolicyDaemon", "CPulse", .product(name: "Logging", package: "swift-log")],
            swiftSettings: essentials
        ),
        .executableTarget(
            name: "audio-policyd",
            dependencies: [
                "AudioPolicy",
                "AudioPolicyDaemon",
                "AudioPolicyTools",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: essentials
        ),
        // The fuzzers' seeded generator and settings (FUZZ_SEED, FUZZ_SCALE), shared by the test targets.
        .target(name: "Fuzzing", dependencies: ["AudioPolicy"], path: "Tests/Fuzzing"),
        .testTarget(name: "AudioPolicyTests", dependencies: ["AudioPolicy", "Fuzzing"]),
        .testTarget(name: "IntegrationTests", dependencies: ["AudioPolicy", "AudioPolicyDaemon", "AudioPolicyTools", "Fuzzing"]),
        // The shell's pure parts (journal format and file, systemd notification address, `top` screen).
        .testTarget(name: "AudioPolicyDaemonTests", dependencies: ["AudioPolicy", "AudioPolicyDaemon", "AudioPolicyTools"]),
    ]
)
