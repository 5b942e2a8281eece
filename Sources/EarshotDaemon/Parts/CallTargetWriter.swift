import AudioGraph
import Logging
import RoutingPolicy

/// Cooperative mode's half of calls (docs/policy.md §8 `bluetooth-microphone = "calls"`): each
/// call's `target.object` in the `default` metadata, as `pw-metadata` writes it, which the
/// session manager honours (WirePlumber 0.5 then switches the headset to hands-free for it);
/// a target taken back is removed while its stream still exists (once it is gone PipeWire
/// removes its keys itself and refuses any change to them). The value is the source's name:
/// WirePlumber does not save a name as the role's target for the next stream (it saves a
/// serial or id it can resolve), so a call leaves nothing behind.
final class CallTargetWriter {
    private let logger: Logger
    /// What was sent and has not shown in the graph yet, by stream serial: a value, or nil for
    /// a removal. A decision made before the echo sends nothing twice.
    private var sent: [UInt64: String?] = [:]
    /// The `default` metadata object written to: another one (a session manager that came
    /// back) holds none of what was sent.
    private var metadataID: ObjectID?
    init(logger: Logger) { self.logger = logger }

    func reset() {
        sent = [:]
        metadataID = nil
    }

    nonisolated(nonsending) func apply(_ targets: StreamTargets, graph: Graph, on connection: any PipeWireCommands) async {
        guard let metadata = graph.defaultMetadata else { return }
        if metadata.id != metadataID {
            metadataID = metadata.id
            sent = [:]
        }
        if !sent.isEmpty {
            let present = Set(graph.captureStreams.map(\.objectKey))
            sent = sent.filter { present.contains($0.key) }
        }
        guard !targets.isEmpty else { return }
        var writes: [(stream: ObjectID, key: String, value: String?)] = []
        for (id, target) in targets.pointed.sorted(by: { $0.key < $1.key }) {
            guard let stream = graph.nodes[id], stream.serial == target.serial else { continue }
            // Only once the session manager has linked the new stream: WirePlumber 0.5 moving a
            // stream whose first link is still being made fails the new link and leaves the
            // stream unlinked for good ("1 of 1 PipeWire links failed to activate"; seen when the
            // target came 4 ms after the first link). Its links' changes are inputs too.
            guard Self.isLinked(id, in: graph) else { continue }
            if metadata[id, target.key]?.value == target.value {
                sent[stream.objectKey] = nil
                continue
            }
            if sent[stream.objectKey] == .some(target.value) { continue }
            sent[stream.objectKey] = .some(target.value)
            writes.append((id, target.key, target.value))
        }
        for (id, target) in targets.released.sorted(by: { $0.key < $1.key }) {
            guard let stream = graph.nodes[id], stream.serial == target.serial, metadata[id, target.key]?.value == target.value,
                sent[stream.objectKey] != .some(nil)
            else { continue }
            sent[stream.objectKey] = .some(nil)
            writes.append((id, target.key, nil))
        }
        for (index, write) in writes.enumerated() {
            await send(stream: write.stream, key: write.key, value: write.value, flush: index == writes.count - 1, on: connection)
        }
    }

    /// Whether a capture stream records: running, with a link that is active (a link that is
    /// only `paused` was seen 2 ms after WirePlumber made it, still too early to move).
    static func isLinked(_ stream: ObjectID, in graph: Graph) -> Bool {
        graph.nodes[stream]?.state == .running && graph.incomingLinks(of: stream).contains { $0.state == .active }
    }

    /// One write (nil: the key's removal); the last of a turn waits for PipeWire's answer.
    private nonisolated(nonsending) func send(stream: ObjectID, key: String, value: String?, flush: Bool, on connection: any PipeWireCommands) async {
        do {
            _ = try await connection.setDefaultMetadata(subject: stream, key: key, type: nil, value: value, flush: flush)
            logger.info(value.map { "call: capture stream \(stream) pointed at \($0) (\(key))" } ?? "call: \(key) of capture stream \(stream) removed")
        } catch {
            logger.warning("cannot set \(key) of capture stream \(stream) to \(value ?? "nothing"): \(error)")
        }
    }
}
