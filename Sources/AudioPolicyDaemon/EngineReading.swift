import AudioPolicy

/// The engine as the daemon's parts see it: its policy and state, read only.
///
/// Only ``Daemon`` hands the engine events (``Daemon/feed(_:)``, the one caller of `Engine.handle`); the
/// parts read what it decided (publication, control replies) or a fact it keeps (a stream's factor).
protocol EngineReading: AnyObject {
    /// The engine as it stands (a value: reading it changes nothing).
    var engine: Engine { get }
}
