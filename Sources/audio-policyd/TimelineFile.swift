import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import FoundationGaps
import Glibc

/// Timeline pictures on disk, for `plot` and `test --timeline`: named after their fixture.
enum TimelineFile {
    /// `navigation-ducks-and-restores.svg` for `…/short/navigation-ducks-and-restores.toml`.
    static func name(for fixture: String) -> String {
        var name = fixture.pathLastComponent
        if name.hasSuffix(".toml") { name.removeLast(5) }
        return name + ".svg"
    }

    /// Writes `timeline` as SVG to `path`; if it cannot, says so on stderr (`PATH: cannot write: reason`,
    /// no usage text: the command line was right) and fails.
    static func write(_ timeline: Timeline, to path: String) throws {
        do {
            try Data(TimelineSVG(timeline).render().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            let folder = path.pathFolder
            let reason = folder.isEmpty || FileManager.default.fileExists(atPath: folder)
                ? errorMessage(error) : "no such folder \(folder)"
            StandardStream.error.write("\(path): cannot write: \(reason)\n")
            throw ExitCode.failure
        }
    }
}

extension TimelineFile {
    /// A picture name per fixture path, unique among them: fixtures of one name in different folders
    /// (`short/x.toml`, `call/x.toml`) get their folder in front (`short-x.svg`, `call-x.svg`).
    static func names(for fixtures: [String]) -> [String] {
        let plain = fixtures.map(name(for:))
        var counts: [String: Int] = [:]
        for name in plain { counts[name, default: 0] += 1 }
        var used: Set<String> = []
        return zip(fixtures, plain).map { fixture, name in
            var unique = name
            if counts[name, default: 0] > 1 {
                let folder = fixture.pathFolder.pathLastComponent
                unique = folder.isEmpty ? name : "\(folder)-\(name)"
            }
            var candidate = unique, number = 2
            while used.contains(candidate) {
                candidate = "\(unique.dropLast(4))-\(number).svg"
                number += 1
            }
            used.insert(candidate)
            return candidate
        }
    }
}
