/// Stream property lists as the daemon sees them: strings by key, a stream's merged with its client's.
/// (The pulse backend adds the conversions to and from libpulse's `pa_proplist`.)
public enum PropertyList {
    /// A stream's properties with its client's added where the stream lacks them (sink inputs and source
    /// outputs alike: pipewire-pulse, for example, puts `pipewire.access.portal.app_id` and the
    /// `pipewire.sec.*` keys on the client alone).
    public static func merged(stream: [String: String], client: [String: String]?) -> [String: String] {
        guard let client else { return stream }
        return stream.merging(client) { streamValue, _ in streamValue }
    }
}
