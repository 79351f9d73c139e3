/// Whether WirePlumber's own role policy is turned on, read from its config files.
///
/// WirePlumber 0.4 (Debian 12) ships its role-based endpoints commented out in
/// `policy.lua.d/50-endpoints-config.lua` (`--[[ … ]]` around `default_policy.policy.roles`); a user
/// turns them on by copying the file to `/etc/wireplumber` or `~/.config/wireplumber` and uncommenting
/// it. WirePlumber 0.5 turns its role loopbacks on with `policy.linking.role-based.loopbacks = required`
/// in a `wireplumber.conf.d` fragment. There is no runtime query for either, so the config is read.
public enum WirePlumberConfig {
    /// Whether a Lua config text sets `default_policy.policy.roles` outside comments.
    public static func luaEnablesRoles(_ text: String) -> Bool {
        uncommentedLua(text).contains("default_policy.policy.roles")
            || uncommentedLua(text).contains("default_policy.policy[\"roles\"]")
    }

    /// Whether a SPA-JSON config text requires the 0.5 role-based loopbacks outside comments.
    public static func confEnablesRoles(_ text: String) -> Bool {
        text.split(separator: "\n").contains { line in
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return code.contains("role-based.loopbacks") && code.contains("required")
        }
    }

    /// Lua text without `--[[ … ]]` blocks and `--` line comments.
    static func uncommentedLua(_ text: String) -> String {
        var result: [Character] = []
        let characters = Array(text)
        var at = 0
        func starts(_ token: String, _ index: Int) -> Bool {
            let token = Array(token)
            return index + token.count <= characters.count && Array(characters[index..<index + token.count]) == token
        }
        while at < characters.count {
            if starts("--[[", at) {
                at += 4
                while at < characters.count, !starts("]]", at) { at += 1 }
                at += 2
            } else if starts("--", at) {
                while at < characters.count, characters[at] != "\n" { at += 1 }
            } else {
                result.append(characters[at])
                at += 1
            }
        }
        return String(result)
    }
}
