import FoundationEssentials
import FoundationGaps
import Glibc

extension ControlServer {
    /// One client of the control socket, as the server keeps it: its socket, the bytes it sent that are
    /// not a whole line yet, and the bytes it has not taken yet.
    ///
    /// It only frames and buffers; when to read, write or close is ``ControlServer``'s business. Both
    /// buffers stay bounded because the server stops reading early (see ``ControlServer/maxLine`` and
    /// ``ControlServer/readPause``) and drops a client whose output passes ``ControlServer/maxBacklog``.
    final class Client {
        /// What the next whole line of input is.
        enum Line: Equatable {
            /// A request, its bytes valid UTF-8 (the newline removed).
            case request(String)
            /// Nothing but spaces and tabs: ignored.
            case blank
            /// Bytes that are not UTF-8: never handed on as a request.
            case notUTF8
            /// Longer than the limit it was taken with; the rest of the input is discarded.
            case tooLong
        }

        let fd: Int32
        let peer: PeerCredentials?
        /// Of another user (or of none the kernel could tell): served nothing.
        let refused: Bool
        /// Received bytes; the first `taken` of them are lines already handed out.
        private var input = Data()
        private var taken = 0
        private(set) var output = Data()
        /// The client sent its end of file (closed, or shut down its writing side).
        var endOfInput = false
        /// No more requests are read; the connection closes once its output is out.
        var closing = false
        /// Gone or given up on: the next loop iteration disconnects it.
        var dropped = false
        /// It stopped taking replies (closed its socket, or its reading side) but may have sent requests
        /// that are not served yet: they are still carried out, their replies thrown away, until its end
        /// of input. A script that writes `begin`, `focus` or `command` lines and closes without reading
        /// means every one of them.
        var deaf = false
        var readWatch: AnyObject?
        var writeWatch: AnyObject?

        init(fd: Int32, peer: PeerCredentials?, refused: Bool) {
            self.fd = fd
            self.peer = peer
            self.refused = refused
        }

        deinit {
            readWatch = nil
            writeWatch = nil
            Glibc.close(fd)
        }

        /// Keeps what a read brought (dropping the lines already taken first).
        func received(_ bytes: ArraySlice<UInt8>) {
            if taken > 0 {
                input.removeSubrange(input.startIndex..<(input.startIndex + taken))
                taken = 0
            }
            input.append(contentsOf: bytes)
        }

        /// Takes the next whole line out of the input, if there is one; at the end of input an unfinished
        /// last line counts as whole. A line over `maxLength` bytes discards the rest of the input.
        func nextLine(maxLength: Int) -> Line? {
            let start = input.startIndex + taken
            let newline = input[start...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline ?? input.endIndex
            if end - start > maxLength {
                input = Data()
                taken = 0
                return .tooLong
            }
            guard newline != nil || (endOfInput && end > start) else { return nil }
            let bytes = input[start..<end]
            taken = (newline.map { $0 + 1 } ?? end) - input.startIndex
            guard let text = String(validating: bytes, as: UTF8.self) else { return .notUTF8 }
            return text.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } ? .blank : .request(text)
        }

        /// Appends `line` and a newline to the output.
        func queue(_ line: String) {
            output.append(contentsOf: line.utf8)
            output.append(UInt8(ascii: "\n"))
        }

        /// Sends as much output as the socket takes now, without waiting; false if the client is gone.
        func flush() -> Bool {
            while !output.isEmpty {
                let sent = output.withUnsafeBytes { raw in
                    Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                if sent > 0 {
                    output.removeSubrange(output.startIndex..<(output.startIndex + sent))
                } else if sent < 0, errno == EINTR {
                    continue
                } else {
                    return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                }
            }
            return true
        }

        /// Forgets the output (a client given up on).
        func discardOutput() { output = Data() }
    }
}
