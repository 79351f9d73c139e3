/// A value as a policy file wrote it, with where: merging drop-ins keeps the place of the value that
/// won, so an error in the merged policy and `explain`'s "set in FILE:LINE" point at the right file.
struct Written<Value: Sendable>: Sendable {
    var value: Value
    var location: SourceLocation

    init(_ value: Value, at location: SourceLocation) {
        self.value = value
        self.location = location
    }
}
