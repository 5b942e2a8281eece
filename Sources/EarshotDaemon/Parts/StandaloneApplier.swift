import AudioGraph
import Logging
import SystemBridge

/// No session manager: keep the `default` metadata (creating it when nobody provides it),
/// give new playback streams ports, and link every following stream to the default sink,
/// make before break. The links Earshot made are the connection's to know (`ownedLinks()`);
/// this part only remembers which streams it asked for ports and whether it made the metadata.
final class StandaloneApplier: Applier {
    private let writer: DefaultSinkWriter
    private let sourceWriter: DefaultSinkWriter
    private let logger: Logger
    /// Streams (by object serial: ids are reused) already asked to configure ports.
    private var portsRequested: Set<UInt64> = []
    /// Earshot created the `default` metadata on this connection (the graph may not show it yet).
    private var createdMetadata = false
    /// Streams (by serial) that could not be linked to their target, and the ends as they
    /// were then: reported once, retried only when the target or a port of either end changes
    /// (a failed link's own add/remove events must not start another attempt: that was a hot
    /// loop on PipeWire 1.4, whose null sinks without a format have a port no link can use).
    private var unlinkable: [UInt64: LinkEnds] = [:]
    /// Streams (by serial) Earshot linked in standalone mode: after a session manager that
    /// does not adopt them arrives (WirePlumber 0.4), Earshot keeps them playing.
    private var served: Set<UInt64> = []

    /// What a link attempt depended on: the target sink and the ports of both ends.
    struct LinkEnds: Equatable {
        var target: UInt64
        var ports: [UInt64]

        /// A capture stream's attempt: its source and the ports of both ends.
        init?(capture stream: ObjectID, source: ObjectID, in graph: Graph) {
            guard let node = graph.nodes[source] else { return nil }
            target = node.objectKey
            ports = (graph.ports(of: source, direction: .output) + graph.ports(of: stream, direction: .input))
                .map { $0.serial ?? UInt64(1) << 63 | UInt64($0.id) }.sorted()
        }

        init?(stream: ObjectID, target: ObjectID, in graph: Graph) {
            guard let sink = graph.nodes[target] else { return nil }
            self.target = sink.objectKey
            ports = (graph.ports(of: stream, direction: .output) + graph.ports(of: target, direction: .input))
                .map { $0.serial ?? UInt64(1) << 63 | UInt64($0.id) }.sorted()
        }
    }

    /// Capture streams (by serial) already asked to configure ports, and those that could not
    /// be linked to their source (as `unlinkable` for playback).
    private var capturePortsRequested: Set<UInt64> = []
    private var captureUnlinkable: [UInt64: LinkEnds] = [:]

    init(writer: DefaultSinkWriter, sourceWriter: DefaultSinkWriter, logger: Logger) {
        self.writer = writer
        self.sourceWriter = sourceWriter
        self.logger = logger
    }

    /// The input (§8): the default source's keys in the `default` metadata, and every capture
    /// stream that follows it linked from it, make before break (pinned ones untouched).
    nonisolated(nonsending) func applySource(_ target: String, graph: Graph, on connection: any PipeWireCommands) async {
        guard await ensureDefaultMetadata(graph, on: connection) else { return }
        let keys = [Graph.configuredSourceKey, Graph.effectiveSourceKey].filter { !sourceWriter.isWritten(target, key: $0, in: graph) }
        if !keys.isEmpty { await sourceWriter.write(target, keys: keys, on: connection, flush: false) }
        await relinkCaptureStreams(graph, to: target, on: connection)
    }

    private nonisolated(nonsending) func relinkCaptureStreams(_ graph: Graph, to target: String, on connection: any PipeWireCommands) async {
        let streams = graph.captureStreams
        guard !streams.isEmpty else { return }
        let present = Set(streams.map(\.objectKey))
        capturePortsRequested.formIntersection(present)
        captureUnlinkable = captureUnlinkable.filter { present.contains($0.key) }
        let requestedIDs = Set(streams.filter { capturePortsRequested.contains($0.objectKey) }.map(\.id))
        let owned = StreamPlan.capturedLinks(connection.ownedLinks())
        let plan = StreamPlan.makeCapture(graph: graph, defaultSource: target, ownedLinks: owned, portsRequested: requestedIDs)
        guard !plan.isEmpty else { return }
        logger.debug("capture relink plan: \(plan)")
        let channels = Self.captureChannels(of: target, in: graph)
        for stream in plan.configurePorts {
            if let node = graph.nodes[stream] { capturePortsRequested.insert(node.objectKey) }
            do { try await connection.configureCapturePorts(ofNode: stream, channels: channels) } catch {
                logger.warning("cannot configure ports of capture stream \(stream): \(error)")
            }
        }
        let linking = plan.moves.filter { move in
            guard move.needsLink, let stream = graph.nodes[move.stream] else { return false }
            let ends = LinkEnds(capture: move.stream, source: move.target, in: graph)
            return captureUnlinkable[stream.objectKey] == nil || captureUnlinkable[stream.objectKey] != ends
        }
        // Source → stream: the source is the link's output node.
        let results = await connection.relink(linking.map { RelinkMove(output: $0.target, input: $0.stream, obsolete: $0.obsoleteLinks) })
        for (move, result) in zip(linking, results) {
            guard let key = graph.nodes[move.stream]?.objectKey else { continue }
            let problem: String
            switch result {
            case .success(let links) where !links.isEmpty:
                if captureUnlinkable.removeValue(forKey: key) != nil { logger.info("capture stream \(move.stream) linked from \(move.target) now") }
                continue
            case .success: problem = "no link was created"
            case .failure(let error): problem = "\(error)"
            }
            captureUnlinkable[key] = LinkEnds(capture: move.stream, source: move.target, in: graph)
            logger.warning("cannot link capture stream \(move.stream) from \(move.target): \(problem); trying again when a port of either changes")
        }
        let obsolete = plan.moves.filter { !$0.needsLink }.flatMap(\.obsoleteLinks)
        if !obsolete.isEmpty {
            do { try await connection.destroy(obsolete) } catch { logger.debug("old capture links already gone: \(error)") }
        }
    }

    /// The source's channel positions (its output ports in order), so a capture stream's own
    /// converter mixes from what the source gives; mono when there is no source.
    private static func captureChannels(of sourceName: String, in graph: Graph) -> [String] {
        guard let source = graph.node(named: sourceName) else { return ["MONO"] }
        let channels = graph.ports(of: source.id, direction: .output).compactMap(\.channel)
        return channels.isEmpty ? ["MONO"] : channels
    }

    func reset() {
        portsRequested = []
        capturePortsRequested = []
        captureUnlinkable = [:]
        createdMetadata = false
        unlinkable = [:]
        served = []
    }

    nonisolated(nonsending) func apply(_ target: String, graph: Graph, on connection: any PipeWireCommands) async {
        guard await ensureDefaultMetadata(graph, on: connection) else { return }
        let keys = [Graph.configuredSinkKey, Graph.effectiveSinkKey].filter { !writer.isWritten(target, key: $0, in: graph) }
        // No round trip before relinking: the links go out right behind the writes, and the
        // relink's own round trips settle both.
        if !keys.isEmpty { await writer.write(target, keys: keys, on: connection, flush: false) }
        await relinkStreams(graph, to: target, on: connection)
    }

    /// A session manager came. A session manager that finds a `default` metadata object at
    /// start uses it instead of making its own (WirePlumber 0.4 and 0.5, measured): then
    /// Earshot's stays, as the desktop's. One that makes its own gets the field: Earshot's
    /// goes the moment the other one shows, so two never stay.
    nonisolated(nonsending) func removeOwnMetadata(_ graph: Graph, on connection: any PipeWireCommands) async {
        guard createdMetadata else { return }
        let ours = connection.createdDefaultMetadataIDs()
        guard graph.metadata.values.contains(where: { $0.name == "default" && !ours.contains($0.id) }) else { return }
        createdMetadata = false
        if await connection.removeCreatedDefaultMetadata() {
            logger.info("removed the default metadata Earshot provided: the session manager provides its own")
        }
    }

    /// The streams Earshot linked before a session manager came, once its metadata holds
    /// Earshot's decision. A session manager that links a stream the moment it is free
    /// (`SessionManager.relinksFreedStreams`, WirePlumber 0.5) gets them: Earshot's links go
    /// and it links them to that default. One that does not (WirePlumber 0.4 leaves a stream
    /// someone else linked alone, does not see those links go, and a stream that outlived the
    /// previous WirePlumber is never activated again) would leave them silent: Earshot keeps
    /// them playing on the default itself, make before break, until they end or the session
    /// manager links them after all.
    nonisolated(nonsending) func handBackStreams(
        _ graph: Graph, to target: String, sessionManagerRelinks: Bool, on connection: any PipeWireCommands
    ) async {
        let owned = connection.ownedLinks()
        guard !owned.isEmpty || !served.isEmpty else { return }
        if sessionManagerRelinks {
            served = []
            let released = owned.values.flatMap(\.keys).sorted()
            guard !released.isEmpty else { return }
            logger.info("handing streams \(owned.keys.sorted()) back to the session manager: removing Earshot's links \(released)")
            do { try await connection.destroy(released) } catch { logger.debug("Earshot's links already gone: \(error)") }
            return
        }
        // Streams the session manager linked after all are its own now.
        var adopted: [ObjectID] = []
        var serving: Set<ObjectID> = []
        for stream in graph.playbackStreams where served.contains(stream.objectKey) {
            let ours = owned[stream.id] ?? [:]
            if graph.outgoingLinks(of: stream.id).contains(where: { ours[$0.id] == nil }) {
                adopted += ours.keys
                served.remove(stream.objectKey)
            } else {
                serving.insert(stream.id)
            }
        }
        if !adopted.isEmpty {
            logger.info("the session manager linked streams Earshot served: removing Earshot's links \(adopted.sorted())")
            do { try await connection.destroy(adopted.sorted()) } catch { logger.debug("Earshot's links already gone: \(error)") }
        }
        if !serving.isEmpty { await relinkStreams(graph, to: target, on: connection, only: serving) }
    }

    /// Nobody provides the `default` metadata, so Earshot does (it lives as long as Earshot's
    /// connection).
    private nonisolated(nonsending) func ensureDefaultMetadata(_ graph: Graph, on connection: any PipeWireCommands) async -> Bool {
        if graph.defaultMetadata != nil || createdMetadata { return true }
        do {
            try await connection.createDefaultMetadata()
            createdMetadata = true
            logger.info("created the default metadata (no session manager provides one)")
            return true
        } catch {
            logger.error("cannot create the default metadata: \(error)")
            return false
        }
    }

    /// Links every following stream to the default sink, make before break (new links first,
    /// then Earshot's old ones), and gives new streams ports.
    /// - Parameter only: when set, only these streams (Earshot's to serve in cooperative mode)
    ///   are moved or given ports.
    private nonisolated(nonsending) func relinkStreams(
        _ graph: Graph, to target: String, on connection: any PipeWireCommands, only: Set<ObjectID>? = nil
    ) async {
        let streams = graph.playbackStreams
        let present = Set(streams.map(\.objectKey))
        portsRequested.formIntersection(present)
        unlinkable = unlinkable.filter { present.contains($0.key) }
        served.formIntersection(present)
        let requestedIDs = Set(streams.filter { portsRequested.contains($0.objectKey) }.map(\.id))
        var plan = StreamPlan.make(graph: graph, defaultSink: target, ownedLinks: connection.ownedLinks(), portsRequested: requestedIDs)
        if let only {
            // A served stream that lost its ports (WirePlumber 0.4 reconfigures a stream it
            // tries to adopt, then never finishes) gets them again: nobody else will.
            plan.configurePorts.removeAll { !only.contains($0) }
            plan.moves.removeAll { !only.contains($0.stream) }
        }
        guard !plan.isEmpty else { return }
        logger.debug("relink plan: \(plan)")
        let channels = Self.channels(of: target, in: graph)
        for stream in plan.configurePorts {
            if let node = graph.nodes[stream] { portsRequested.insert(node.objectKey) }
            do { try await connection.configureDSPPorts(ofNode: stream, channels: channels) } catch {
                logger.warning("cannot configure ports of stream \(stream): \(error)")
            }
        }
        // Make before break, per stream: every new link is requested at once, and each
        // stream's old links go (from the PipeWire loop) once all of its new ones exist. A
        // stream whose new links failed keeps its old ones: it is never left unlinked.
        let linking = plan.moves.filter { move in
            guard move.needsLink, let stream = graph.nodes[move.stream] else { return false }
            return unlinkable[stream.objectKey] == nil || unlinkable[stream.objectKey] != LinkEnds(stream: move.stream, target: move.target, in: graph)
        }
        let results = await connection.relink(linking.map { RelinkMove(output: $0.stream, input: $0.target, obsolete: $0.obsoleteLinks) })
        for (move, result) in zip(linking, results) {
            guard let key = graph.nodes[move.stream]?.objectKey else { continue }
            let problem: String
            switch result {
            case .success(let links) where !links.isEmpty:
                served.insert(key)
                if unlinkable.removeValue(forKey: key) != nil { logger.info("stream \(move.stream) linked to \(move.target) now") }
                continue
            case .success: problem = "no link was created"
            case .failure(let error): problem = "\(error)"
            }
            unlinkable[key] = LinkEnds(stream: move.stream, target: move.target, in: graph)
            logger.warning("cannot link stream \(move.stream) to \(move.target): \(problem); trying again when a port of either changes")
        }
        // Moves with only the break left: their links to the target exist already.
        let obsolete = plan.moves.filter { !$0.needsLink }.flatMap(\.obsoleteLinks)
        if !obsolete.isEmpty {
            do { try await connection.destroy(obsolete) } catch { logger.debug("old links already gone: \(error)") }
        }
    }

    /// The sink's channel positions (its input ports in order), so a stream's own converter
    /// up- or downmixes to what the sink plays; stereo when there is no sink.
    private static func channels(of sinkName: String, in graph: Graph) -> [String] {
        guard let sink = graph.node(named: sinkName) else { return ["FL", "FR"] }
        let channels = graph.ports(of: sink.id, direction: .input).compactMap(\.channel)
        return channels.isEmpty ? ["FL", "FR"] : channels
    }
}
