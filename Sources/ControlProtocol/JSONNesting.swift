/// How deeply a JSON text nests its arrays and objects, measured before Foundation's decoder sees it.
///
/// Why: the decoder in swift-corelibs' FoundationEssentials (Swift 6.3) traps instead of throwing when
/// a text nests past its own limit of 512 and ends there (`{"id":[[[[…` cut off): computing the error's
/// source location runs off the buffer. The control-socket fuzz found it, one line killing the daemon.
/// Nothing we read nests more than a few levels, so a text deeper than ``limit`` is refused before
/// decoding, with a reason, in one linear pass that allocates nothing.
public enum JSONNesting {
    /// The deepest nesting accepted: far above any request, reply or journal (at most 6), far below
    /// the decoder's 512.
    public static let limit = 64

    /// The deepest nesting accepted from a compositor's window tree (sway's GET_TREE: two levels per
    /// container): deep enough for any layout a person makes, still below the decoder's 512.
    public static let treeLimit = 400

    /// Whether `bytes` opens more than `limit` arrays or objects inside each other; brackets in
    /// strings (escapes included) do not count.
    public static func isTooDeep<Bytes: Sequence>(_ bytes: Bytes, limit: Int = limit) -> Bool
    where Bytes.Element == UInt8 {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth = max(0, depth - 1)
            default: break
            }
        }
        return false
    }

    /// The reason given for a text refused by ``isTooDeep(_:)``.
    public static var reason: String { "arrays or objects nested more than \(limit) deep" }
}
