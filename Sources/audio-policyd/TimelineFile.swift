import ArgumentParser
import AudioPolicy
import Foundation

/// Timeline pictures on disk, for `plot` and `test --timeline`: named after their fixture.
enum TimelineFile {
    /// `navigation-ducks-and-restores.svg` for `…/short/navigation-ducks-and-restores.toml`.
    static func name(for fixture: String) -> String {
        var name = (fixture as NSString).lastPathComponent
        if name.hasSuffix(".toml") { name.removeLast(5) }
        return name + ".svg"
    }

    /// Writes `timeline` as SVG to `path`; if it cannot, says so on stderr (`PATH: cannot write: reason`,
    /// no usage text: the command line was right) and fails.
    static func write(_ timeline: Timeline, to path: String) throws {
        do {
            try Data(TimelineSVG(timeline).render().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            let folder = (path as NSString).deletingLastPathComponent
            let reason = folder.isEmpty || FileManager.default.fileExists(atPath: folder)
                ? error.localizedDescription : "no such folder \(folder)"
            FileHandle.standardError.write(Data("\(path): cannot write: \(reason)\n".utf8))
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
                let folder = ((fixture as NSString).deletingLastPathComponent as NSString).lastPathComponent
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
