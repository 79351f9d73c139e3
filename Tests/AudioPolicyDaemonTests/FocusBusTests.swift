import AudioPolicy
@testable import AudioPolicyDaemon
@testable import SessionBus
import Testing

/// `org.audiopolicyd.Focus.Activated(pid, appId)`'s arguments as KWin's `callDBus` may send them: a
/// JavaScript number arrives as an int32, an int64, a uint32 or a double, maybe in a variant.
@Suite struct FocusBusTests {
    @Test("any D-Bus integer, an integral double or a numeric string is the pid; the app id names it")
    func pidInAnyNumericType() {
        let expected = Event.focus(AppIdentity(pid: 4242, name: "org.kde.dolphin"))
        for pid: BusValue in [.int32(4242), .uint32(4242), .int64(4242), .double(4242), .variant(.int32(4242)), .string("4242")] {
            #expect(FocusBus.event(activated: [pid, .string("org.kde.dolphin")]) == expected, "\(pid)")
        }
    }

    @Test("pid 0 is no pid: the app id alone, or with neither no window has focus")
    func noPid() {
        #expect(FocusBus.event(activated: [.int32(0), .string("steam")]) == .focus(AppIdentity(name: "steam")))
        #expect(FocusBus.event(activated: [.int32(0), .string("")]) == .focus(nil))
    }

    @Test("control: what is not (number, string) is refused")
    func refused() {
        for arguments: [BusValue] in [[.string("game")], [.double(1.5), .string("")], [.int32(-1), .string("")],
                                      [.int64(1 << 40), .string("")], [.int32(1), .int32(2)], [.boolean(true), .string("")]] {
            #expect(FocusBus.event(activated: arguments) == nil, "\(arguments)")
        }
    }

    @Test("the introspection data, ours and the Now Playing player's: one node holding Introspectable and each object's own interfaces, every element closed")
    func introspection() {
        for (xml, own) in [(FocusBus.introspection, "org.audiopolicyd.Focus"), (NowPlayingPlayer.introspection, "org.mpris.MediaPlayer2.Player")] {
            #expect(xml.hasPrefix("<!DOCTYPE node PUBLIC"))
            #expect(xml.components(separatedBy: "<node>").count == 2 && xml.hasSuffix("</node>"))
            #expect(xml.contains("<interface name=\"org.freedesktop.DBus.Introspectable\">"))
            #expect(xml.contains("<interface name=\"\(own)\">"))
            #expect(Self.balanced(xml), "\(xml)")
        }
        // Control: an interface left open is found.
        #expect(!Self.balanced(Introspection.document("  <interface name=\"x\">")))
    }

    /// Whether every `<interface>` and `<node>` opened is closed.
    static func balanced(_ xml: String) -> Bool {
        ["interface", "node"].allSatisfy { tag in
            xml.components(separatedBy: "<\(tag)").count == xml.components(separatedBy: "</\(tag)>").count
        }
    }
}
