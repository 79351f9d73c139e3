import CPulse
import SoundBackend

/// Conversion of libpulse property lists (`pa_proplist`) into Swift values.
extension PropertyList {
    /// The string-valued entries of `proplist`; binary values are skipped.
    public static func dictionary(_ proplist: OpaquePointer?) -> [String: String] {
        guard let proplist else { return [:] }
        var result: [String: String] = [:]
        var state: UnsafeMutableRawPointer? = nil
        while let key = pa_proplist_iterate(proplist, &state) {
            // pa_proplist_gets returns NULL for values that are not strings.
            if let value = pa_proplist_gets(proplist, key) {
                result[String(cString: key)] = String(cString: value)
            }
        }
        return result
    }

    /// A new `pa_proplist` holding `entries`; the caller frees it with `pa_proplist_free`.
    public static func make(_ entries: [String: String]) -> OpaquePointer {
        guard let proplist = pa_proplist_new() else {
            fatalError("pa_proplist_new returned NULL")
        }
        for (key, value) in entries {
            pa_proplist_sets(proplist, key, value)
        }
        return proplist
    }
}
