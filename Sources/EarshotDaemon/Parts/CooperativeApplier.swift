import AudioGraph
import Logging

/// A session manager (WirePlumber) runs: write `default.configured.audio.sink` once per
/// change and let it move the following streams; never touch its links.
/// Puts a decided default into PipeWire with a session manager (docs/architecture.md,
/// "Applying a decision"); `reset()` forgets what belonged to the last connection.
final class CooperativeApplier {
    private let writer: DefaultSinkWriter
    private let sourceWriter: DefaultSinkWriter
    private let logger: Logger
    /// Pinned streams (by object serial: ids are reused) whose pin Earshot wrote.
    private var pinsWritten: Set<UInt64> = []
    /// Whether the session manager needs pinned streams' pins in the metadata (WirePlumber 0.4
    /// only; `SessionManager.movesPinnedStreams`).
    var pinsPinnedStreams = true
    /// The decision is the default found at start or reconnect, still held: when the session
    /// manager already plays it and nobody configured one, nothing is written.
    var holdsFoundDefault = false

    init(writer: DefaultSinkWriter, sourceWriter: DefaultSinkWriter, logger: Logger) {
        self.writer = writer
        self.sourceWriter = sourceWriter
        self.logger = logger
    }

    /// The input (§8): `default.configured.audio.source`, once per change, as for the sink;
    /// the session manager moves the capture streams that follow the default source.
    nonisolated(nonsending) func applySource(_ target: String, graph: Graph, on connection: any PipeWireCommands, holdsFoundSource: Bool) async {
        sourceWriter.settled(target, in: graph)
        guard graph.defaultMetadata != nil, !sourceWriter.isWritten(target, key: Graph.configuredSourceKey, in: graph) else { return }
        if holdsFoundSource, sourceWriter.inFlight.isEmpty, graph.effectiveDefaultSourceName == target, graph.configuredDefaultSourceName == nil {
            logger.trace("cooperative: source \(target) is the effective default already and none is configured: nothing to write")
            return
        }
        await sourceWriter.write(target, keys: [Graph.configuredSourceKey], on: connection, flush: true)
    }

    func reset() { pinsWritten = [] }

    nonisolated(nonsending) func apply(_ target: String, graph: Graph, on connection: any PipeWireCommands) async {
        if pinsPinnedStreams { await keepPinnedStreamsPinned(graph, on: connection) }
        writer.settled(target, in: graph)
        // No `default` metadata (the session manager is starting, or just left): nothing to
        // write to yet; its arrival is another input.
        guard graph.defaultMetadata != nil, !writer.isWritten(target, key: Graph.configuredSinkKey, in: graph) else {
            logger.trace("cooperative: \(target) not written (default metadata \(graph.metadata.values.filter { $0.name == "default" }.map(\.id)), configured \(graph.configuredDefaultSinkName ?? "-"), in flight \(writer.inFlight))")
            return
        }
        // Starting changes nothing: the default found still holds, the session manager already
        // plays it and nobody ever picked one; writing would only turn its choice into a pick.
        // (A decision of the policy's own is written even then: the session manager would
        // otherwise follow its own priorities on the next change.)
        if holdsFoundDefault, writer.inFlight.isEmpty, graph.effectiveDefaultSinkName == target, graph.configuredDefaultSinkName == nil {
            logger.trace("cooperative: \(target) is the effective default already and none is configured: nothing to write")
            return
        }
        await writer.write(target, keys: [Graph.configuredSinkKey], on: connection, flush: true)
    }

    /// WirePlumber 0.4 moves a stream whose `target.object` property names a node when the
    /// default changes, but honours the same key in the stream's `default` metadata (as
    /// pavucontrol writes it). So each pinned stream gets its own pin written there, once,
    /// before any default write could move it.
    private nonisolated(nonsending) func keepPinnedStreamsPinned(_ graph: Graph, on connection: any PipeWireCommands) async {
        guard let metadata = graph.defaultMetadata else { return }
        // Capture streams too: WirePlumber 0.4 moves a pinned recorder with the default source.
        let streams = graph.playbackStreams + graph.captureStreams
        pinsWritten.formIntersection(streams.map(\.objectKey))
        for stream in streams where !pinsWritten.contains(stream.objectKey) {
            guard let pin = stream.props["target.object"] ?? stream.props["node.target"], !pin.isEmpty,
                metadata[stream.id, "target.object"] == nil
            else { continue }
            pinsWritten.insert(stream.objectKey)
            do {
                try await connection.setDefaultMetadata(subject: stream.id, key: "target.object", type: nil, value: pin, flush: true)
            } catch {
                logger.warning("cannot pin stream \(stream.id) to \(pin): \(error)")
            }
        }
    }
}

extension Node {
    /// Identifies the object across id reuse: its serial, or its id where none is known.
    var objectKey: UInt64 { serial ?? (UInt64(1) << 63 | UInt64(id)) }
}
