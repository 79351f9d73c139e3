/// Whose window has focus, as a focus source knows it: a process id (X11's `_NET_WM_PID`, sway's `pid`, a
/// KWin script's `client.pid`) and a name (the binary, an app id, an application name).
///
/// The engine groups streams by app (``TrackedStream/app(of:_:_:)``: the process first), so a window's
/// app is the app of the streams with its pid. A window's process is not always the one that plays
/// (Chromium's audio service, Wine's): when no stream has the pid, streams whose binary, app id or name
/// is `name` count as the window's app. The pid comes first because two instances of one binary — an
/// mpv game and an mpv playlist — are two apps.
public struct AppIdentity: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int?
    /// The binary (`/proc/PID/exe`'s last part), an app id or an application name; compared without case.
    public var name: String?

    public init(pid: Int? = nil, name: String? = nil) {
        self.pid = pid
        self.name = name.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `2002`, `supertuxkart` or `2002 (supertuxkart)`; the inverse of ``init(parsing:)``.
    public var description: String {
        switch (pid, name) {
        case let (pid?, name?): "\(pid) (\(name))"
        case let (pid?, nil): "\(pid)"
        case let (nil, name?): name
        case (nil, nil): "?"
        }
    }

    /// Reads ``description``'s forms: digits are a pid, anything else a name. Nil for an empty text.
    public init?(parsing text: String) {
        var pidText = Substring(text)
        var name: String?
        if text.hasSuffix(")"), let open = text.firstIndex(of: "("), open > text.startIndex,
           text[text.index(before: open)] == " " {
            pidText = text[..<text.index(before: open)]
            name = String(text[text.index(after: open)...].dropLast())
        }
        if let pid = Int(pidText), pid > 0 {
            self.init(pid: pid, name: name)
        } else if !text.isEmpty {
            self.init(name: text)
        } else {
            return nil
        }
    }

    /// Whether a stream with these properties belongs to this process.
    func hasProcess(of properties: Properties) -> Bool {
        guard let pid else { return false }
        return properties["application.process.id"] == String(pid)
    }

    /// Whether a stream with these properties is this app by name: its binary, app id or application name.
    func isNamed(in properties: Properties) -> Bool {
        guard let name = name?.lowercased() else { return false }
        return PropertyMatcher.appKeys.contains { properties[$0]?.lowercased() == name }
    }
}
