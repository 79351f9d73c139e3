/// What the files of a policy wrote for one `[class.NAME]`, key by key, each with where: a drop-in
/// that sets one key of a class changes that key and leaves the others as the files before it wrote
/// them. Kind-dependent defaults (`release-after`, `on-output-loss`) are filled in only once all files
/// are merged, from the kind in force, as if every key had been written in one table.
struct ClassSettings: Sendable {
    var name: String
    /// The `[class.NAME]` header of the first file that defines the class: where the class stands.
    var location: SourceLocation
    var kind: Written<InterruptionKind>?
    /// `kind` is written, valid or not (a wrong one is reported where it is; no "needs a kind" then).
    var kindWritten = false
    /// The classes named by `above`, each where it is written; the whole's location is the key's.
    var above: Written<[Written<String>]>?
    var grace: Written<Milliseconds>?
    var duck: Written<Level>?
    var duckRamp: Written<Milliseconds>?
    var restoreRamp: Written<Milliseconds>?
    var hold: Written<Milliseconds>?
    /// `"never"` is `nil` inside.
    var releaseAfter: Written<Milliseconds?>?
    var onOutputLoss: Written<OutputLossAction>?
    var unfocused: Written<UnfocusedAction>?
    var unfocusedDuck: Written<Level>?
    var closedWindow: Written<ClosedWindowAction>?

    init(name: String, location: SourceLocation) {
        self.name = name
        self.location = location
    }

    /// These settings with `later`'s written keys over them (the class's place stays the first file's).
    func overridden(by later: ClassSettings) -> ClassSettings {
        var merged = self
        merged.kind = later.kind ?? kind
        merged.kindWritten = kindWritten || later.kindWritten
        merged.above = later.above ?? above
        merged.grace = later.grace ?? grace
        merged.duck = later.duck ?? duck
        merged.duckRamp = later.duckRamp ?? duckRamp
        merged.restoreRamp = later.restoreRamp ?? restoreRamp
        merged.hold = later.hold ?? hold
        merged.releaseAfter = later.releaseAfter ?? releaseAfter
        merged.onOutputLoss = later.onOutputLoss ?? onOutputLoss
        merged.unfocused = later.unfocused ?? unfocused
        merged.unfocusedDuck = later.unfocusedDuck ?? unfocusedDuck
        merged.closedWindow = later.closedWindow ?? closedWindow
        return merged
    }

    /// Where each key in force was written, by its name in the file: ``InterruptionClass/origins``.
    var origins: [String: SourceLocation] {
        let written: [(String, SourceLocation?)] = [
            ("kind", kind?.location), ("above", above?.location), ("grace", grace?.location),
            ("duck", duck?.location), ("duck-ramp", duckRamp?.location), ("restore-ramp", restoreRamp?.location),
            ("hold", hold?.location), ("release-after", releaseAfter?.location),
            ("on-output-loss", onOutputLoss?.location), ("unfocused", unfocused?.location),
            ("unfocused-duck", unfocusedDuck?.location), ("closed-window", closedWindow?.location),
        ]
        var origins: [String: SourceLocation] = [:]
        for case let (key, location?) in written { origins[key] = location }
        return origins
    }

    /// The class these settings make, with `kind` resolved (an unknown or missing one: primary, reported
    /// elsewhere) and every key not written at its kind's default.
    func interruptionClass(kind resolved: InterruptionKind) -> InterruptionClass {
        var value = InterruptionClass(name: name, kind: resolved, location: location)
        value.grace = grace?.value ?? value.grace
        value.duck = duck?.value ?? value.duck
        value.duckRamp = duckRamp?.value ?? value.duckRamp
        value.restoreRamp = restoreRamp?.value ?? value.restoreRamp
        value.hold = hold?.value ?? value.hold
        if let releaseAfter { value.releaseAfter = releaseAfter.value }
        value.onOutputLoss = onOutputLoss?.value ?? value.onOutputLoss
        value.unfocused = unfocused?.value ?? value.unfocused
        value.unfocusedDuck = unfocusedDuck?.value ?? value.unfocusedDuck
        value.closedWindow = closedWindow?.value ?? value.closedWindow
        value.origins = origins
        return value
    }
}
