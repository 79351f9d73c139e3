/// One thing `audio-policyd doctor` found in this session: what will not behave, why, and the command
/// that fixes it.
public struct Finding: Codable, Hashable, Sendable {
    /// How much it matters: a problem (exit status 1), a note (nothing misbehaves until you opt in),
    /// or a check that could not be made (exit status 2 when nothing else is wrong).
    public enum Severity: String, Codable, Hashable, Sendable {
        case problem
        case note
        case unchecked
    }

    /// A stable name for scripts (`role-cork`, `playerctld`, `no-player`…).
    public var check: String
    public var severity: Severity
    /// What will not behave, in one line.
    public var problem: String
    /// Why.
    public var why: String
    /// The command (or edit) that fixes it.
    public var fix: String

    public init(check: String, severity: Severity = .problem, problem: String, why: String, fix: String) {
        self.check = check
        self.severity = severity
        self.problem = problem
        self.why = why
        self.fix = fix
    }

    /// `doctor`'s exit status for a list of findings: 1 with any problem, else 2 with any check not
    /// made, else 0.
    public static func exitStatus(_ findings: [Finding]) -> Int32 {
        if findings.contains(where: { $0.severity == .problem }) { return 1 }
        if findings.contains(where: { $0.severity == .unchecked }) { return 2 }
        return 0
    }
}
