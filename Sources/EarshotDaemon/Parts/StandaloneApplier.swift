import WireFields
import ControlProtocol
import AudioGraph
import Logging
import RoutingPolicy
import SystemBridge

/// No session manager: keep the `default` metadata (creating it when nobody provides it),
/// give new playback streams ports, and link every following stream to the default sink,
/// make before break. The links Earshot made are the connection's to know (`ownedLinks()`);
/// this part only remembers which streams it asked for ports and whether it made the metadata.
/// Puts a decided default into PipeWire without a session manager (docs/architecture.md,
/// "Applying a decision"); `reset()` forgets what belonged to the last connection.
final class StandaloneApplier {
    private let writer: DefaultSinkWriter
    private let sourceWriter: DefaultSinkWriter
    private let logger: Logger
    /// The playback streams that follow the default sink, and the capture streams that follow
    /// the default source (§8): what was asked of each, per direction.
    private let playback = FollowingStreams(direction: .output)
    private let capture = FollowingStreams(direction: .input)
    /// Earshot created the `default` metadata on this connection (the graph may not show it yet).
    private var createdMetadata = false
    /// Streams (by serial) Earshot linked in standalone mode: after a session manager that
    /// does not adopt them arrives (WirePlumber 0.4), Earshot keeps them playing.
    private var served: Set<UInt64> = []
    /// Streams (by serial) handed back to a session manager that links freed streams, and
    /// when: one it has not linked within `handBackGrace` is Earshot's again.
    private var handedBack: [UInt64: Milliseconds] = [:]
    /// Streams (by serial) a session manager left unlinked after their hand-back: Earshot keeps
    /// them, as for one that never adopts streams, instead of freeing them again.
    private var keptAfterHandBack: Set<UInt64> = []
    /// How long a session manager that links freed streams (WirePlumber 0.5) gets to link one
    /// Earshot freed. A WirePlumber still starting under load was seen to leave one silent for
    /// good (hunt run 39): its initial scan saw Earshot's links, and the links' removal came
    /// before it watched for it. Generous: one that links later than this plays the stream on
    /// a second sink for a moment, until Earshot sees its link and removes its own (at 3 s, a
    /// WirePlumber still starting at a load average of 20 did that in hunt run 42).
    static let handBackGrace: Milliseconds = 10_000

    /// When a handed-back stream's grace ends, if one is waiting (the daemon's timer comes back
    /// then, so the check runs with no other input).
    var nextDeadline: Milliseconds? { handedBack.values.min().map { $0 + Self.handBackGrace } }

    /// The streams of one direction Earshot links: what it asked of them, by object serial
    /// (ids are reused).
    final class FollowingStreams {
        let direction: AudioDirection
        /// Streams already asked to configure ports.
        var portsRequested: Set<UInt64> = []
        /// Streams that could not be linked to their target, and the ends as they were then:
        /// reported once, retried only when the target or a port of either end changes (a
        /// failed link's own add/remove events must not start another attempt: that was a hot
        /// loop on PipeWire 1.4, whose null sinks without a format have a port no link can use).
        var unlinkable: [UInt64: LinkEnds] = [:]

        init(direction: AudioDirection) { self.direction = direction }

        func forget() {
            portsRequested = []
            unlinkable = [:]
        }

        /// The streams of this direction in `graph`.
        func streams(in graph: Graph) -> [Node] { direction == .output ? graph.playbackStreams : graph.captureStreams }

        /// Playback streams play into their target; capture streams record from it.
        func move(_ move: StreamPlan.Move) -> RelinkMove {
            direction == .output
                ? RelinkMove(output: move.stream, input: move.target, obsolete: move.obsoleteLinks)
                : RelinkMove(output: move.target, input: move.stream, obsolete: move.obsoleteLinks)
        }

        var noun: String { direction == .output ? "stream" : "capture stream" }
    }

    /// What a link attempt depended on: the target and the ports of both ends.
    struct LinkEnds: Equatable {
        var target: UInt64
        var ports: [UInt64]

        /// A playback stream's output ports and its sink's input ports; a capture stream's input
        /// ports and its source's output ports.
        init?(stream: ObjectID, target: ObjectID, direction: AudioDirection, in graph: Graph) {
            guard let node = graph.nodes[target] else { return nil }
            self.target = node.objectKey
            let (streamPorts, targetPorts): (PortDirection, PortDirection) = direction == .output ? (.output, .input) : (.input, .output)
            ports = (graph.ports(of: stream, direction: streamPorts) + graph.ports(of: target, direction: targetPorts))
                .map { $0.serial ?? UInt64(1) << 63 | UInt64($0.id) }.sorted()
        }
    }

    init(writer: DefaultSinkWriter, sourceWriter: DefaultSinkWriter, logger: Logger) {
        self.writer = writer
        self.sourceWriter = sourceWriter
        self.logger = logger
    }

    /// The input (§8): the default source's keys in the `default` metadata, and every capture
    /// stream that follows it linked from it, make before break (pinned ones untouched); a
    /// call linked from its own source instead (`calls`, §8).
    nonisolated(nonsending) func applySource(_ target: String, graph: Graph, calls: StreamTargets = StreamTargets(), on connection: any PipeWireCommands) async {
        guard await ensureDefaultMetadata(graph, on: connection) else { return }
        let keys = [Graph.configuredSourceKey, Graph.effectiveSourceKey].filter { !sourceWriter.isWritten(target, key: $0, in: graph) }
        if !keys.isEmpty { await sourceWriter.write(target, keys: keys, on: connection, flush: false) }
        await relink(capture, graph, to: target, calls: calls, on: connection)
    }

    func reset() {
        playback.forget()
        capture.forget()
        createdMetadata = false
        served = []
        handedBack = [:]
        keptAfterHandBack = []
    }

    nonisolated(nonsending) func apply(_ target: String, graph: Graph, on connection: any PipeWireCommands) async {
        guard await ensureDefaultMetadata(graph, on: connection) else { return }
        let keys = [Graph.configuredSinkKey, Graph.effectiveSinkKey].filter { !writer.isWritten(target, key: $0, in: graph) }
        // No round trip before relinking: the links go out right behind the writes, and the
        // relink's own round trips settle both.
        if !keys.isEmpty { await writer.write(target, keys: keys, on: connection, flush: false) }
        await relink(playback, graph, to: target, on: connection)
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
        _ graph: Graph, to target: String, sessionManagerRelinks: Bool, at now: Milliseconds, on connection: any PipeWireCommands
    ) async {
        let owned = connection.ownedLinks()
        guard !owned.isEmpty || !served.isEmpty || !handedBack.isEmpty else { return }
        if sessionManagerRelinks {
            await takeBackUnlinked(graph, to: target, at: now, on: connection)
            let serials = Dictionary(graph.playbackStreams.map { ($0.id, $0.objectKey) }, uniquingKeysWith: { first, _ in first })
            let freeing = owned.filter { stream, _ in !(serials[stream].map(keptAfterHandBack.contains) ?? false) }
            served.formIntersection(keptAfterHandBack)
            let released = freeing.values.flatMap(\.keys).sorted()
            if !released.isEmpty {
                logger.info("handing streams \(freeing.keys.sorted()) back to the session manager: removing Earshot's links \(released)")
                for stream in freeing.keys { if let serial = serials[stream] { handedBack[serial] = now } }
                do { try await connection.destroy(released) } catch { logger.debug("Earshot's links already gone: \(error)") }
            }
            guard !keptAfterHandBack.isEmpty else { return }
            // The streams kept: as with a session manager that never adopts them, below.
        }
        // Streams the session manager linked after all are its own now.
        var adopted: [ObjectID] = []
        var serving: Set<ObjectID> = []
        for stream in graph.playbackStreams where served.contains(stream.objectKey) {
            let ours = owned[stream.id] ?? [:]
            if graph.outgoingLinks(of: stream.id).contains(where: { ours[$0.id] == nil }) {
                adopted += ours.keys
                served.remove(stream.objectKey)
                keptAfterHandBack.remove(stream.objectKey)
            } else {
                serving.insert(stream.id)
            }
        }
        if !adopted.isEmpty {
            logger.info("the session manager linked streams Earshot served: removing Earshot's links \(adopted.sorted())")
            do { try await connection.destroy(adopted.sorted()) } catch { logger.debug("Earshot's links already gone: \(error)") }
        }
        if !serving.isEmpty { await relink(playback, graph, to: target, on: connection, only: serving) }
    }

    /// Handed-back streams the session manager has linked (or that ended) are its own; one
    /// still unlinked after `handBackGrace` is linked to the default by Earshot again, and kept.
    private nonisolated(nonsending) func takeBackUnlinked(_ graph: Graph, to target: String, at now: Milliseconds, on connection: any PipeWireCommands) async {
        guard !handedBack.isEmpty else { return }
        var silent: Set<ObjectID> = []
        for (serial, since) in handedBack {
            guard let stream = graph.playbackStreams.first(where: { $0.objectKey == serial }), graph.outgoingLinks(of: stream.id).isEmpty else {
                handedBack[serial] = nil
                continue
            }
            guard now - since >= Self.handBackGrace else { continue }
            handedBack[serial] = nil
            keptAfterHandBack.insert(serial)
            served.insert(serial)
            silent.insert(stream.id)
        }
        guard !silent.isEmpty else { return }
        logger.warning("the session manager did not link streams \(silent.sorted()) within \(Self.handBackGrace) ms of their hand-back: Earshot links them to the default again and keeps them until they end or the session manager links them")
        await relink(playback, graph, to: target, on: connection, only: silent)
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

    /// Links every following stream to its default — a playback stream to the default sink, a
    /// capture stream from the default source (§8) — make before break (new links first, then
    /// Earshot's old ones), and gives new streams ports.
    /// - Parameter only: when set, only these streams (Earshot's to serve in cooperative mode)
    ///   are moved or given ports.
    private nonisolated(nonsending) func relink(
        _ followers: FollowingStreams, _ graph: Graph, to target: String, calls: StreamTargets = StreamTargets(), on connection: any PipeWireCommands,
        only: Set<ObjectID>? = nil
    ) async {
        let direction = followers.direction
        let streams = followers.streams(in: graph)
        let present = Set(streams.map(\.objectKey))
        followers.portsRequested.formIntersection(present)
        followers.unlinkable = followers.unlinkable.filter { present.contains($0.key) }
        if direction == .output { served.formIntersection(present) }
        guard !streams.isEmpty else { return }
        let requestedIDs = Set(streams.filter { followers.portsRequested.contains($0.objectKey) }.map(\.id))
        var plan = direction == .output
            ? StreamPlan.make(graph: graph, defaultSink: target, ownedLinks: connection.ownedLinks(), portsRequested: requestedIDs)
            : StreamPlan.makeCapture(
                graph: graph, defaultSource: target, ownedLinks: StreamPlan.capturedLinks(connection.ownedLinks()), portsRequested: requestedIDs,
                calls: calls.pointed.mapValues(\.value))
        if let only {
            // A served stream that lost its ports (WirePlumber 0.4 reconfigures a stream it
            // tries to adopt, then never finishes) gets them again: nobody else will.
            plan.configurePorts.removeAll { !only.contains($0) }
            plan.moves.removeAll { !only.contains($0.stream) }
        }
        guard !plan.isEmpty else { return }
        logger.debug("\(followers.noun) relink plan: \(plan)")
        let channels = Self.channels(of: target, direction: direction, in: graph)
        for stream in plan.configurePorts {
            if let node = graph.nodes[stream] { followers.portsRequested.insert(node.objectKey) }
            do {
                if direction == .output {
                    try await connection.configureDSPPorts(ofNode: stream, channels: channels)
                } else {
                    try await connection.configureCapturePorts(ofNode: stream, channels: channels)
                }
            } catch {
                logger.warning("cannot configure ports of \(followers.noun) \(stream): \(error)")
            }
        }
        // Make before break, per stream: every new link is requested at once, and each
        // stream's old links go (from the PipeWire loop) once all of its new ones exist. A
        // stream whose new links failed keeps its old ones: it is never left unlinked.
        let linking = plan.moves.filter { move in
            guard move.needsLink, let stream = graph.nodes[move.stream] else { return false }
            let ends = LinkEnds(stream: move.stream, target: move.target, direction: direction, in: graph)
            return followers.unlinkable[stream.objectKey] == nil || followers.unlinkable[stream.objectKey] != ends
        }
        let results = await connection.relink(linking.map(followers.move))
        let toward = direction == .output ? "to" : "from"
        for (move, result) in zip(linking, results) {
            guard let key = graph.nodes[move.stream]?.objectKey else { continue }
            let problem: String
            switch result {
            case .success(let links) where !links.isEmpty:
                if direction == .output { served.insert(key) }
                if followers.unlinkable.removeValue(forKey: key) != nil {
                    logger.info("\(followers.noun) \(move.stream) linked \(toward) \(move.target) now")
                }
                continue
            case .success: problem = "no link was created"
            case .failure(let error): problem = "\(error)"
            }
            followers.unlinkable[key] = LinkEnds(stream: move.stream, target: move.target, direction: direction, in: graph)
            logger.warning("cannot link \(followers.noun) \(move.stream) \(toward) \(move.target): \(problem); trying again when a port of either changes")
        }
        // Moves with only the break left: their links to the target exist already.
        let obsolete = plan.moves.filter { !$0.needsLink }.flatMap(\.obsoleteLinks)
        if !obsolete.isEmpty {
            do { try await connection.destroy(obsolete) } catch { logger.debug("old links already gone: \(error)") }
        }
    }

    /// The target's channel positions, so a stream's own converter mixes to what the sink plays
    /// (its input ports in order; stereo when there is no sink) or from what the source gives
    /// (its output ports; mono when there is none).
    private static func channels(of name: String, direction: AudioDirection, in graph: Graph) -> [String] {
        let fallback = direction == .output ? ["FL", "FR"] : ["MONO"]
        let node = direction == .output ? graph.node(named: name) : StreamPlan.captureTarget(named: name, in: graph)
        guard let node else { return fallback }
        let channels = graph.ports(of: node.id, direction: direction == .output ? .input : .output).compactMap(\.channel)
        return channels.isEmpty ? fallback : channels
    }
}
