/// One packet of the ALSA plugin's wire protocol, either way, as a Swift value.
///
/// Mirrors `Sources/CAudioPolicyALSAPlugin/include/audiopolicy_alsa_protocol.h` byte for byte (packed,
/// little-endian, a 4-byte header `{version, type, size}` whose `size` is the whole packet and must equal
/// its type's), so that the daemon, written in Swift, and the plugin, small C inside every ALSA client,
/// agree without sharing code. Decoding is strict the way the header asks of a receiver: a wrong
/// version, type, size or value gives `nil`, and the caller ignores the packet.
public enum PluginMessage: Equatable, Sendable {
    /// The plugin's first packet on every connection: who opened which PCM, which way.
    case hello(Hello)
    /// hw_params chosen.
    case format(Format)
    /// A state change, or the answer to QUERY.
    case state(State)
    /// Peaks of a span of audio.
    case peak(Peak)
    /// Daemon: ramp linearly to `gain` over `rampMilliseconds`.
    case setGain(gain: Float, rampMilliseconds: UInt32)
    /// Daemon: one whole ramp to `gain` over `rampMilliseconds`, linear in decibels from where the gain is,
    /// gains at or below `floorDecibels` counting as the floor (as ``AudioPolicy/Ramp`` goes): sent only to
    /// a plugin whose HELLO names ``Hello/Features/ramp``.
    case ramp(gain: Float, rampMilliseconds: UInt32, floorDecibels: Float)
    /// Daemon: fade to silence (or back to the gain) over `fadeMilliseconds`.
    case mute(Bool, fadeMilliseconds: UInt32)
    /// Daemon: one PEAK per `intervalMilliseconds` (0: the plugin's default reporting; ``meterOff``: none).
    case meter(intervalMilliseconds: UInt32)
    /// Daemon: send STATE and the next window's PEAK now.
    case query

    // MARK: - The protocol's constants

    public static let version: UInt8 = 1
    /// RAMP's lowest floor (`APA_MIN_FLOOR_DB`).
    public static let lowestFloor: Float = -200
    /// METER's interval for "no PEAK at all" (`APA_METER_OFF`): a stream nobody measures.
    public static let meterOff = UInt32.max
    /// Longer packets are never valid: a receiver reads at most this much of one.
    public static let largestSize = 204
    static let nameBytes = 32
    static let longNameBytes = 64

    /// Which way a stream goes (`enum apa_direction`).
    public enum Direction: UInt8, Sendable {
        case playback = 0
        case capture = 1
    }

    /// Where a stream is, as far as an extplug can see (`enum apa_stream_state`).
    public enum StreamState: UInt8, Sendable {
        case open = 0
        case setUp = 1
        case prepared = 2
        case running = 3
        case closed = 4
    }

    /// The sample format (`enum apa_sample_format`).
    public enum SampleFormat: UInt16, Sendable {
        case s16 = 1
        case s32 = 2
        case float = 3
    }

    /// `struct apa_hello`, 204 bytes.
    public struct Hello: Equatable, Sendable {
        /// The client's word for its pid; the daemon trusts `SO_PEERCRED` instead.
        public var pid: UInt32
        public var direction: Direction
        /// `program_invocation_short_name`, e.g. `aplay`.
        public var binary: String
        /// The PCM's `class` configuration key, e.g. `navigation`; may be empty.
        public var classHint: String
        /// `$AUDIO_POLICYD_APP_NAME`, else the PCM's `name` key; may be empty.
        public var application: String
        /// The PCM the app opened, e.g. `default`.
        public var pcmName: String
        /// What the plugin can do beyond the protocol's first messages (`features`, `APA_FEATURE_*`): an
        /// older plugin says nothing and is sent none of the messages it would ignore.
        public var features: Features

        public init(pid: UInt32, direction: Direction, binary: String, classHint: String, application: String,
                    pcmName: String, features: Features = []) {
            self.pid = pid
            self.direction = direction
            self.binary = binary
            self.classHint = classHint
            self.application = application
            self.pcmName = pcmName
            self.features = features
        }

        /// HELLO's `features` bits.
        public struct Features: OptionSet, Equatable, Sendable {
            public let rawValue: UInt8
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// Takes ``PluginMessage/ramp(gain:rampMilliseconds:floorDecibels:)`` (`APA_FEATURE_RAMP`).
            public static let ramp = Features(rawValue: 1)
        }
    }

    /// `struct apa_format`, 20 bytes.
    public struct Format: Equatable, Sendable {
        public var rate: UInt32
        public var channels: UInt16
        public var sampleFormat: SampleFormat
        /// How far ahead of the ear the plugin may run: a gain change is heard up to this late.
        public var bufferFrames: UInt32
        public var periodFrames: UInt32

        public init(rate: UInt32, channels: UInt16, sampleFormat: SampleFormat, bufferFrames: UInt32,
                    periodFrames: UInt32) {
            self.rate = rate
            self.channels = channels
            self.sampleFormat = sampleFormat
            self.bufferFrames = bufferFrames
            self.periodFrames = periodFrames
        }
    }

    /// `struct apa_state`, 24 bytes.
    public struct State: Equatable, Sendable {
        public var state: StreamState
        public var muted: Bool
        /// Linear gain applied to the last frame.
        public var gain: Float
        /// Where the ramp is going (0 while muted).
        public var target: Float
        /// Frames through the plugin since the last prepare.
        public var position: UInt64

        public init(state: StreamState, muted: Bool, gain: Float, target: Float, position: UInt64) {
            self.state = state
            self.muted = muted
            self.gain = gain
            self.target = target
            self.position = position
        }
    }

    /// `struct apa_peak`, 24 bytes.
    public struct Peak: Equatable, Sendable {
        /// Highest |sample| the app wrote in the span (1 = full scale).
        public var peakIn: Float
        /// Highest |sample| after the gain: what is heard.
        public var peakOut: Float
        public var frames: UInt32
        public var position: UInt64

        public init(peakIn: Float, peakOut: Float, frames: UInt32, position: UInt64) {
            self.peakIn = peakIn
            self.peakOut = peakOut
            self.frames = frames
            self.position = position
        }
    }

    // MARK: - Types and sizes

    /// `enum apa_message_type`.
    var type: UInt8 {
        switch self {
        case .hello: 1
        case .format: 2
        case .state: 3
        case .peak: 4
        case .setGain: 16
        case .mute: 17
        case .meter: 18
        case .query: 19
        case .ramp: 20
        }
    }

    /// The size of each type's packet, header included (the header's `_Static_assert`s).
    static func size(ofType type: UInt8) -> Int? {
        switch type {
        case 1: 204
        case 2: 20
        case 3, 4: 24
        case 16, 17: 12
        case 18: 8
        case 19: 4
        case 20: 16
        default: nil
        }
    }

    /// Whether the plugin sends this message (types 1…15); the daemon sends the others.
    public var isFromPlugin: Bool { type < 16 }
}

// MARK: - Encoding

extension PluginMessage {
    /// The packet's bytes, exactly as the C struct lays them out.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        let size = Self.size(ofType: type) ?? 4
        bytes.reserveCapacity(size)
        bytes.append(Self.version)
        bytes.append(type)
        bytes.appendLittleEndian(UInt16(size))
        switch self {
        case let .hello(hello):
            bytes.appendLittleEndian(hello.pid)
            bytes.append(hello.direction.rawValue)
            bytes.append(hello.features.rawValue)
            bytes.append(contentsOf: [0, 0])
            bytes.appendPadded(hello.binary, to: Self.nameBytes)
            bytes.appendPadded(hello.classHint, to: Self.nameBytes)
            bytes.appendPadded(hello.application, to: Self.longNameBytes)
            bytes.appendPadded(hello.pcmName, to: Self.longNameBytes)
        case let .format(format):
            bytes.appendLittleEndian(format.rate)
            bytes.appendLittleEndian(format.channels)
            bytes.appendLittleEndian(format.sampleFormat.rawValue)
            bytes.appendLittleEndian(format.bufferFrames)
            bytes.appendLittleEndian(format.periodFrames)
        case let .state(state):
            bytes.append(state.state.rawValue)
            bytes.append(state.muted ? 1 : 0)
            bytes.appendLittleEndian(UInt16(0))
            bytes.appendLittleEndian(state.gain.bitPattern)
            bytes.appendLittleEndian(state.target.bitPattern)
            bytes.appendLittleEndian(state.position)
        case let .peak(peak):
            bytes.appendLittleEndian(peak.peakIn.bitPattern)
            bytes.appendLittleEndian(peak.peakOut.bitPattern)
            bytes.appendLittleEndian(peak.frames)
            bytes.appendLittleEndian(peak.position)
        case let .setGain(gain, ramp):
            bytes.appendLittleEndian(gain.bitPattern)
            bytes.appendLittleEndian(ramp)
        case let .ramp(gain, ramp, floor):
            bytes.appendLittleEndian(gain.bitPattern)
            bytes.appendLittleEndian(ramp)
            bytes.appendLittleEndian(floor.bitPattern)
        case let .mute(muted, fade):
            bytes.append(muted ? 1 : 0)
            bytes.append(contentsOf: [0, 0, 0])
            bytes.appendLittleEndian(fade)
        case let .meter(interval):
            bytes.appendLittleEndian(interval)
        case .query:
            break
        }
        return bytes
    }
}

// MARK: - Decoding

extension PluginMessage {
    /// The message in `packet`, or nil when the header's rules or a value are broken: another version, a
    /// type nobody sends, a size that is not the type's, an unknown direction, state or format, a flag
    /// other than 0 or 1, a gain that is not finite or not in 0…1, a peak that is negative or not finite, a
    /// ramp's floor that is not finite or not in −200…0 (0 excluded).
    public init?(decoding packet: some Collection<UInt8>) {
        let bytes = Array(packet)
        guard bytes.count >= 4, bytes[0] == Self.version,
              let size = Self.size(ofType: bytes[1]), bytes.count == size,
              Int(bytes.littleEndian(UInt16.self, at: 2)) == size else { return nil }
        switch bytes[1] {
        case 1:
            guard let direction = Direction(rawValue: bytes[8]) else { return nil }
            self = .hello(Hello(pid: bytes.littleEndian(UInt32.self, at: 4), direction: direction,
                                binary: bytes.paddedString(at: 12, count: Self.nameBytes),
                                classHint: bytes.paddedString(at: 44, count: Self.nameBytes),
                                application: bytes.paddedString(at: 76, count: Self.longNameBytes),
                                pcmName: bytes.paddedString(at: 140, count: Self.longNameBytes),
                                features: Hello.Features(rawValue: bytes[9])))
        case 2:
            guard let sampleFormat = SampleFormat(rawValue: bytes.littleEndian(UInt16.self, at: 10)) else { return nil }
            let format = Format(rate: bytes.littleEndian(UInt32.self, at: 4),
                                channels: bytes.littleEndian(UInt16.self, at: 8), sampleFormat: sampleFormat,
                                bufferFrames: bytes.littleEndian(UInt32.self, at: 12),
                                periodFrames: bytes.littleEndian(UInt32.self, at: 16))
            guard format.rate > 0, format.channels > 0 else { return nil }
            self = .format(format)
        case 3:
            guard let state = StreamState(rawValue: bytes[4]), let muted = Self.flag(bytes[5]) else { return nil }
            let gain = bytes.float(at: 8), target = bytes.float(at: 12)
            guard Self.isGain(gain), Self.isGain(target) else { return nil }
            self = .state(State(state: state, muted: muted, gain: gain, target: target,
                                position: bytes.littleEndian(UInt64.self, at: 16)))
        case 4:
            let peakIn = bytes.float(at: 4), peakOut = bytes.float(at: 8)
            guard Self.isPeak(peakIn), Self.isPeak(peakOut) else { return nil }
            self = .peak(Peak(peakIn: peakIn, peakOut: peakOut, frames: bytes.littleEndian(UInt32.self, at: 12),
                              position: bytes.littleEndian(UInt64.self, at: 16)))
        case 16:
            let gain = bytes.float(at: 4)
            guard Self.isGain(gain) else { return nil }
            self = .setGain(gain: gain, rampMilliseconds: bytes.littleEndian(UInt32.self, at: 8))
        case 17:
            guard let muted = Self.flag(bytes[4]) else { return nil }
            self = .mute(muted, fadeMilliseconds: bytes.littleEndian(UInt32.self, at: 8))
        case 18:
            self = .meter(intervalMilliseconds: bytes.littleEndian(UInt32.self, at: 4))
        case 20:
            let gain = bytes.float(at: 4), floor = bytes.float(at: 12)
            guard Self.isGain(gain), floor.isFinite, floor >= Self.lowestFloor, floor < 0 else { return nil }
            self = .ramp(gain: gain, rampMilliseconds: bytes.littleEndian(UInt32.self, at: 8), floorDecibels: floor)
        default:
            self = .query
        }
    }

    private static func flag(_ byte: UInt8) -> Bool? {
        byte <= 1 ? byte == 1 : nil
    }

    private static func isGain(_ value: Float) -> Bool {
        value.isFinite && value >= 0 && value <= 1
    }

    /// A sample can peak above full scale (floats), but never below zero.
    private static func isPeak(_ value: Float) -> Bool {
        value.isFinite && value >= 0
    }
}

// MARK: - Bytes

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// UTF-8, cut to leave at least one NUL, NUL-padded to `count` bytes.
    fileprivate mutating func appendPadded(_ string: String, to count: Int) {
        let utf8 = Array(string.utf8.prefix(count - 1))
        append(contentsOf: utf8)
        append(contentsOf: repeatElement(0, count: count - utf8.count))
    }

    fileprivate func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value: T = 0
        for byte in 0..<MemoryLayout<T>.size { value |= T(self[offset + byte]) << (8 * byte) }
        return value
    }

    fileprivate func float(at offset: Int) -> Float {
        Float(bitPattern: littleEndian(UInt32.self, at: offset))
    }

    /// The string up to the first NUL (or the field's end); a multi-byte sequence the plugin cut at the
    /// end is repaired (replacement character), never refused.
    fileprivate func paddedString(at offset: Int, count: Int) -> String {
        let field = self[offset..<(offset + count)]
        let end = field.firstIndex(of: 0) ?? field.endIndex
        return String(decoding: field[..<end], as: UTF8.self)
    }
}
