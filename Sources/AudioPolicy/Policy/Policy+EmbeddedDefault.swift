extension Policy {
    /// Where ``embeddedDefault`` says it came from, in ``Policy/source`` and error locations.
    public static let embeddedDefaultSource = "<embedded default>"

    /// The default policy (`policies/default.toml`), built into the binary so the daemon runs without files.
    public static let embeddedDefault: Policy = {
        do {
            return try PolicyLoader.load(text: embeddedDefaultText, file: embeddedDefaultSource)
        } catch {
            preconditionFailure("the embedded default policy does not load (fix policies/default.toml):\n\(error)")
        }
    }()
}
