import AudioPolicy
import ControlProtocol
import SessionBus

/// A control connection that claimed Now Playing: a player without MPRIS that takes its commands over
/// the socket (`claim`, then `playback` for its state).
struct PlayerClaim {
    let client: ControlServer.ClientID
    /// The engine's name for the claim (what `end` takes back).
    let token: StreamID
    let player: PlayerID
    var pid: Int32?
    var application: String
    var status: MPRISPlayer.Status?
}
