/// The path to a value in a TOML document: table keys and array indices, e.g. `rule[2].match."media.role"[1]`.
///
/// A key is one component however it was written: `"media.role"` (quoted, with a dot) is a single key,
/// while `media.role` (dotted) is two. Indices count from 0, for `[[array]]` tables and array elements alike.
public struct TOMLKeyPath: Hashable, Sendable, CustomStringConvertible, ExpressibleByArrayLiteral {
    public enum Component: Hashable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        case key(String)
        case index(Int)

        public init(stringLiteral value: String) { self = .key(value) }
        public init(integerLiteral value: Int) { self = .index(value) }
    }

    public var components: [Component]

    public init(_ components: [Component]) { self.components = components }
    public init(arrayLiteral elements: Component...) { self.components = elements }

    /// The document itself.
    public static let root = TOMLKeyPath([])

    public func appending(_ key: String) -> TOMLKeyPath { TOMLKeyPath(components + [.key(key)]) }
    public func appending(_ index: Int) -> TOMLKeyPath { TOMLKeyPath(components + [.index(index)]) }

    /// The path without its last component (the root stays the root).
    public var parent: TOMLKeyPath { TOMLKeyPath(Array(components.dropLast())) }

    /// Dotted, with keys quoted when they are not bare keys: `rule[2].match."media.role"[1]`.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += Self.isBareKey(key) ? key : TOMLString.quoted(key)
            }
        }
        return text
    }

    static func isBareKey(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy(isBareKeyScalar)
    }

    static func isBareKeyScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }
}
