import ControlProtocol
import Testing

/// The nesting check that keeps lines Foundation's decoder would trap on away from it.
@Suite("JSON nesting")
struct JSONNestingTests {
    @Test("depth counted over arrays and objects, not brackets in strings or after escapes", arguments: [
        (#"{"id":1,"op":"status"}"#, false),
        (String(repeating: "[", count: 64) + String(repeating: "]", count: 64), false),
        (String(repeating: "[", count: 65), true),
        (String(repeating: #"{"a":"#, count: 65), true),
        (String(repeating: "[{", count: 32) + "]", false),
        (String(repeating: "[{", count: 33), true),
        (#"{"a":""# + String(repeating: "[", count: 100) + #""}"#, false),
        (#"{"a":"\"# + "\"" + String(repeating: "[", count: 100) + #""}"#, false),
        (#"{"a":"\\"# + "\"" + String(repeating: "[", count: 100), true),
        // Closings first never make room for more.
        (String(repeating: "]", count: 100) + String(repeating: "[", count: 65), true),
    ])
    func depth(_ text: String, tooDeep: Bool) {
        #expect(JSONNesting.isTooDeep(text.utf8) == tooDeep, "\(text.prefix(40))")
    }
}
