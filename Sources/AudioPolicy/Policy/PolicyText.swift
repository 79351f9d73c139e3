/// One policy file's text handed to ``PolicyLoader/load(_:)``, and whether its place makes it a drop-in.
///
/// A file in a `policy.d` folder is a drop-in whatever it says; any other file is a whole policy unless
/// it has a `[drop-in]` table, which layers it over the embedded default instead. The shipped examples
/// (`policies/car.toml`) say `[drop-in]`, so `--policy policies/car.toml` and a fixture's `policy` key
/// keep working on them.
public struct PolicyText: Sendable {
    public enum Role: Sendable {
        /// A whole policy, or a drop-in over the embedded default when it has a `[drop-in]` table.
        case policy
        /// A drop-in by where it lies (a `policy.d` folder): changes to the files before it.
        case dropIn
    }

    public var text: String
    /// Used in error locations, ``Policy/files`` and each rule's and setting's location.
    public var file: String
    public var role: Role

    public init(text: String, file: String, role: Role) {
        self.text = text
        self.file = file
        self.role = role
    }
}
