import AudioGraph
import SystemBridge
import RoutingPolicy

/// Applying the current decision to PipeWire (design.md §Two ways to apply a decision).
extension Daemon {
    func apply() async {
        guard !isStopped, let connection, let target = engine.currentDefault else { return }
        switch mode {
        case .cooperative:
            await keepPinnedStreamsPinned(on: connection)
            // The session manager moves the following streams; one write per change.
            guard engine.graph.configuredDefaultSinkName != target, pendingOwnWrite != target else { return }
            await writeDefault(target, keys: [Graph.configuredSinkKey], on: connection)
        case .standalone:
            guard await ensureDefaultMetadata(on: connection) else { return }
            var keys: [String] = []
            if engine.graph.configuredDefaultSinkName != target, pendingOwnWrite != target { keys.append(Graph.configuredSinkKey) }
            if engine.graph.effectiveDefaultSinkName != target { keys.append(Graph.effectiveSinkKey) }
            // No round trip before relinking: the links go out right behind the writes, and
            // the relink's own round trips settle both.
            if !keys.isEmpty { await writeDefault(target, keys: keys, on: connection, flush: false) }
            await reconcileStreams()
        case .disconnected:
            return
        }
    }

    /// WirePlumber 0.4 moves a stream whose `target.object` property names a node when the
    /// default changes, but honours the same key in the stream's `default` metadata (as
    /// pavucontrol writes it). So each pinned stream gets its own pin written there, once,
    /// before any default write could move it.
    private func keepPinnedStreamsPinned(on connection: PipeWireConnection) async {
        let graph = engine.graph
        guard let metadata = graph.defaultMetadata else { return }
        for stream in graph.playbackStreams where !pinsWritten.contains(stream.id) {
            guard let pin = stream.props["target.object"] ?? stream.props["node.target"], !pin.isEmpty,
                metadata[stream.id, "target.object"] == nil
            else { continue }
            pinsWritten.insert(stream.id)
            do {
                try await connection.setMetadata(subject: stream.id, key: "target.object", value: pin)
            } catch {
                logger.warning("cannot pin stream \(stream.id) to \(pin): \(error)")
            }
        }
    }

    private func writeDefault(_ name: String, keys: [String], on connection: PipeWireConnection, flush: Bool = true) async {
        let value = MetadataEntry.json(name: name)
        if keys.contains(Graph.configuredSinkKey) { pendingOwnWrite = name }
        for key in keys {
            do {
                try await connection.setMetadata(key: key, type: "Spa:String:JSON", value: value, flush: flush && key == keys.last)
            } catch {
                logger.error("cannot set \(key) to \(name): \(error)")
                if key == Graph.configuredSinkKey { pendingOwnWrite = nil }
            }
        }
    }

    /// The default sink's channel positions (its input ports in order), so a stream's own
    /// converter up- or downmixes to what the sink plays; stereo when there is no sink.
    private func defaultSinkChannels() -> [String] {
        let graph = engine.graph
        guard let sink = engine.currentDefault.flatMap(graph.node(named:)) else { return ["FL", "FR"] }
        let channels = graph.ports(of: sink.id, direction: .input).compactMap(\.channel)
        return channels.isEmpty ? ["FL", "FR"] : channels
    }

    /// Standalone: nobody provides the `default` metadata, so Earshot does (it lives as long
    /// as Earshot's connection).
    private func ensureDefaultMetadata(on connection: PipeWireConnection) async -> Bool {
        if engine.graph.defaultMetadata != nil { return true }
        do {
            _ = try await connection.createMetadata(named: "default")
            _ = try await connection.waitUntil("the default metadata Earshot created") { $0.defaultMetadata != nil }
            logger.info("created the default metadata (no session manager provides one)")
            return true
        } catch {
            logger.error("cannot create the default metadata: \(error)")
            return false
        }
    }

    /// Standalone: links every following stream to the default sink, make before break
    /// (new links first, then Earshot's old ones), and gives new streams ports. Re-runs when
    /// asked again while running, so concurrent triggers coalesce.
    func reconcileStreams() async {
        if isReconciling {
            reconcileAgain = true
            return
        }
        isReconciling = true
        defer { isReconciling = false }
        repeat {
            reconcileAgain = false
            guard mode == .standalone, let connection, !isStopped else { return }
            let plan = StreamPlan.make(
                graph: engine.graph, defaultSink: engine.currentDefault, ownedLinks: ownedLinks, portsRequested: portsRequested)
            if !plan.isEmpty { logger.debug("relink plan: \(plan)") }
            let channels = defaultSinkChannels()
            for stream in plan.configurePorts {
                portsRequested.insert(stream)
                do { try await connection.configureDSPPorts(ofNode: stream, channels: channels) } catch { logger.warning("cannot configure ports of stream \(stream): \(error)") }
            }
            // Make before break, per stream: every new link is requested at once, and each
            // stream's old links go (from the PipeWire loop, no hop back here) once all of its
            // new ones exist. A stream whose new links failed keeps its old ones: it is never
            // left unlinked.
            let linking = plan.moves.filter(\.needsLink)
            let results = await connection.relink(linking.map { RelinkMove(output: $0.stream, input: $0.target, obsolete: $0.obsoleteLinks) })
            for (move, result) in zip(linking, results) {
                switch result {
                case .success(let links) where !links.isEmpty:
                    for link in links { ownedLinks[move.stream, default: [:]][link] = move.target }
                    for link in move.obsoleteLinks { ownedLinks[move.stream]?[link] = nil }
                case .success:
                    logger.warning("cannot link stream \(move.stream) to \(move.target): no link was created")
                case .failure(let error):
                    logger.warning("cannot link stream \(move.stream) to \(move.target): \(error)")
                }
            }
            // Moves with only the break left: their links to the target exist already.
            var obsolete: [ObjectID] = []
            for move in plan.moves where !move.needsLink {
                for link in move.obsoleteLinks {
                    ownedLinks[move.stream]?[link] = nil
                    obsolete.append(link)
                }
            }
            if !obsolete.isEmpty {
                do { try await connection.destroy(obsolete) } catch { logger.debug("old links already gone: \(error)") }
            }
        } while reconcileAgain
    }
}
