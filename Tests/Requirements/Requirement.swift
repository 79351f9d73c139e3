import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a test needs from the machine (a sound server, a program, a desktop): a test whose need is not met
/// is skipped, with the reason, on a developer's machine, and **fails** with it under `CI=true`.
///
/// A laptop without a browser or a compositor should still run the rest; a CI run that skipped a suite
/// did not test it, and went green for nothing. `scripts/test` installs and starts everything every test
/// needs, so in CI an unmet need is a broken set-up, reported as such.
public enum Requirement {
    /// Whether this run is CI's (`CI=true`, as the CI runner sets it).
    public static let inCI: Bool = {
        guard let value = getenv("CI") else { return false }
        return ["true", "1", "yes"].contains(String(cString: value).lowercased())
    }()
}

/// Raised by a requirement's condition in CI: Swift Testing records it as the test's failure.
public struct UnmetRequirement: Error, CustomStringConvertible {
    public var missing: String
    public var description: String { "not run in CI, which must run every test: \(missing)" }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when `missing` is nil; otherwise skips it with `missing` as the reason, or fails it
    /// under `CI=true` (``Requirement``). `missing` says what is missing and how to get it.
    public static func needs(_ missing: String?, sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        let comment = missing.map { Comment(rawValue: $0) }
        return .enabled(comment, sourceLocation: sourceLocation) {
            guard let missing else { return true }
            if Requirement.inCI { throw UnmetRequirement(missing: missing) }
            return false
        }
    }
}
