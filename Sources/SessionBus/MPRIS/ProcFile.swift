import Glibc

/// A small file of `/proc` read in one go: a process's `status`, its AppArmor label, its sandbox's
/// `.flatpak-info`.
///
/// A new stream's process is looked up on the path to its decision (``Sandbox/identify(pid:binary:)``),
/// so the read is plain `open`/`read`/`close` into one buffer, with nothing around the system calls
/// (`String(contentsOfFile:)` added a quarter again to them, in a profile of `bench`'s prompts).
enum ProcFile {
    /// The whole file as UTF-8 text (nil when it cannot be opened or read).
    static func text(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = 4096
        while true {
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: chunk))
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + start, chunk)
            }
            if count < 0 {
                guard errno == EINTR else { return nil }
                bytes.removeLast(chunk)
                continue
            }
            bytes.removeLast(chunk - count)
            if count == 0 { break }
            chunk = max(chunk, bytes.count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
