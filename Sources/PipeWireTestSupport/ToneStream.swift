import AudioGraph
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Light playing streams: `pw-cat --playback` of a sparse WAV file of silence (about 90 min
/// long, 1 GiB of zeros that cost no disk). A real libpipewire client with a real `pw_stream`
/// like any player, at a fraction of mpv's cost (≈ 8 MB RSS and no decoding), so a hundred of
/// them fit on two cores.
extension PipeWireSandbox {
    /// The silence file, made once per sandbox.
    public func silenceFile() throws -> String {
        let path = root.appendingPathComponent("silence.wav").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let dataBytes: UInt32 = 1 << 30
        var header = Data("RIFF".utf8)
        func le32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        func le16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        le32(dataBytes + 36)
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(2); le32(48000); le32(48000 * 4); le16(4); le16(16)
        header.append(contentsOf: Array("data".utf8))
        le32(dataBytes)
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: header) else { throw FixtureError("cannot write \(temporary)") }
        guard truncate(temporary, off_t(header.count) + off_t(dataBytes)) == 0, rename(temporary, path) == 0 else {
            throw FixtureError("cannot size \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }

    /// Starts a `pw-cat` playback stream of silence and waits for its node (with output ports
    /// when `withPorts`; without a session manager, ports come from whoever configures them).
    public func startTone(name: String = "tone", withPorts: Bool = false, timeout: Duration = .seconds(20)) async throws -> (process: ChildProcess, stream: Node) {
        let file = try silenceFile()
        let process = try spawn(name, ["pw-cat", "--playback", "--media-role", "Music", "-P", "{ node.name = \(name) }", file])
        let pid = String(process.pid)
        let graph = try await observer.waitUntil("\(name)'s playback stream", timeout: timeout) { graph in
            graph.playbackStreams.contains { stream in
                graph.clients[stream.clientID ?? 0]?.props["application.process.id"] == pid
                    && (!withPorts || !graph.ports(of: stream.id, direction: .output).isEmpty)
            }
        }
        let stream = graph.playbackStreams.first { graph.clients[$0.clientID ?? 0]?.props["application.process.id"] == pid }!
        return (process, stream)
    }
}
