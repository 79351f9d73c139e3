@testable import AudioPolicy

// MARK: - 8. The glances are the records'

/// The engine's walks read each stream's ``StreamGlance`` instead of its record, and its deadline
/// scans visit only the streams whose glance says they may be due: after every step, each glance is
/// the one its record gives, and the next deadline found so is the one a scan of every record finds.
struct GlanceProperty: EngineProperty {
    static let name = "glances"

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        if let position = engine.streams.staleGlance {
            return Violation(message: "after the step at \(step.time) ms, the glance of stream \(engine.streams.id(at: position)) is not its record's",
                             expectations: [])
        }
        let found = engine.nextDeadline, everyStream = engine.nextDeadlineOfEveryStream
        if found != everyStream {
            return Violation(message: "after the step at \(step.time) ms, the next deadline is \(found.map(String.init) ?? "none") "
                + "among the streams that may be due, \(everyStream.map(String.init) ?? "none") among all",
                             expectations: [])
        }
        return nil
    }
}
