/// What a stream of the soak stands for: the classes a desktop's apps play in, each with the
/// properties real apps send and how long such a sound lasts.
///
/// `music` is the one app whose streams outlive checkpoints (all of one process, so they never
/// interrupt each other); every other kind interrupts it, or is interrupted, and is ended before a
/// checkpoint looks at what was left behind.
public enum SoakStreamKind: String, CaseIterable, Sendable {
    /// The music app: role music, one process for all its streams.
    case music
    /// Another app's music (a browser tab, a game): primary, so it interrupts the music app.
    case otherMusic = "other-music"
    /// An app that says nothing about itself: the default class, primary.
    case noRole = "no-role"
    case navigation
    case notification
    /// A phone or video call: role phone.
    case call
    /// A screen reader: speech-dispatcher's client names, no role.
    case speech

    /// The stream's (and its client's) properties, without the process id the app adds.
    public func properties(number: Int) -> [String: String] {
        switch self {
        case .music:
            ["application.name": "soak-music", "application.process.binary": "soak-music", "media.role": "music"]
        case .otherMusic:
            ["application.name": "soak-video-\(number)", "application.process.binary": "soak-video", "media.role": "music"]
        case .noRole:
            ["application.name": "soak-app-\(number)", "application.process.binary": "soak-app"]
        case .navigation:
            ["application.name": "soak-maps", "application.process.binary": "soak-maps", "media.role": "navigation"]
        case .notification:
            ["application.name": "soak-notifier", "application.process.binary": "soak-notifier", "media.role": "event"]
        case .call:
            ["application.name": "soak-phone", "application.process.binary": "soak-phone", "media.role": "phone"]
        case .speech:
            ["application.name": "speech-dispatcher-espeak-ng", "application.process.binary": "sd_espeak-ng",
             "media.name": "playback"]
        }
    }

    /// The stream-restore key the server gives such a stream (`module-stream-restore.id`; pipewire-pulse
    /// names its keys the same way): by role, else by application name.
    public func restoreKey(number: Int) -> String {
        let properties = properties(number: number)
        if let role = properties["media.role"] { return "sink-input-by-media-role:\(role)" }
        return "sink-input-by-application-name:\(properties["application.name"] ?? "")"
    }

    /// How long such a sound plays, seconds.
    public var lifetime: ClosedRange<Double> {
        switch self {
        case .music: 8...60
        case .otherMusic, .noRole: 1...6
        case .navigation: 0.5...3
        case .notification: 0.2...1.5
        case .call: 2...8
        case .speech: 0.5...4
        }
    }

    /// How often it is drawn, relative to the others.
    var weight: Int {
        switch self {
        case .music: 15
        case .otherMusic: 10
        case .noRole: 10
        case .navigation: 20
        case .notification: 20
        case .call: 7
        case .speech: 10
        }
    }

    /// Whether its streams may live on through a checkpoint.
    public var survives: Bool { self == .music }

    /// A kind drawn by weight.
    static func random(using random: inout SoakRandom) -> SoakStreamKind {
        let total = allCases.reduce(0) { $0 + $1.weight }
        var pick = Int.random(in: 0..<total, using: &random)
        for kind in allCases {
            if pick < kind.weight { return kind }
            pick -= kind.weight
        }
        return .music
    }
}
