import AudioGraph
import RoutingPolicy

/// What the apply stage reads of each graph change: the `default` metadata coming and going,
/// the session's mode, and the configured defaults PipeWire reports — Earshot's own echoes, a
/// session manager's start-up, or a user's pick.
extension ApplyStage: GraphChangeObserver {
    var observedKinds: GraphChangeKinds { [.metadata, .metadataProperty, .removed, .client] }

    func graphWillChange(_ change: GraphChange, in turn: GraphTurn) {
        let graph = turn.graph
        switch change {
        case .metadataProperty(let id, 0, let key?, _, let value) where graph.metadata[id]?.name == "default":
            logger.debug("default metadata \(id): \(key) = \(value ?? "nil") (in flight \(writer.inFlight))")
        case .metadata(let metadata) where metadata.name == "default":
            let appeared = graph.metadata[metadata.id] == nil
            logger.trace("default metadata \(metadata.id) \(appeared ? "appeared" : "changed")")
            if appeared, turn.session.connection?.createdDefaultMetadataIDs().contains(metadata.id) != true {
                // A session manager's new `default` metadata: the values it fills in first are
                // restored from its own state, not a user's pick.
                writer.sessionManagerArrived(at: turn.now)
                sourceWriter.sessionManagerArrived(at: turn.now)
            }
        case .removed(let id) where graph.metadata[id]?.name == "default":
            logger.trace("default metadata \(id) went")
            writer.metadataRemoved()
            sourceWriter.metadataRemoved()
        default:
            break
        }
    }

    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? {
        switch change {
        case .client, .removed:
            // The session re-read the mode (it observes before this stage).
            if turn.session.connection != nil, turn.session.mode != modeSeen { modeChanged(to: turn.session.mode, at: turn.now) }
        case .metadataProperty(let id, 0, Graph.configuredSinkKey?, _, let value?) where turn.graph.metadata[id]?.name == "default":
            if let name = MetadataEntry.name(inJSON: value), !writer.consumeEcho(of: name, at: turn.now), name != turn.currentDefault {
                // Someone else (wpctl, pavucontrol, GNOME) chose: follow, don't fight. The
                // graph-change decision before it is superseded, never applied.
                return .userSelectedDefault(name)
            }
        case .metadataProperty(let id, 0, Graph.configuredSourceKey?, _, let value?) where turn.graph.metadata[id]?.name == "default":
            if let name = MetadataEntry.name(inJSON: value), !sourceWriter.consumeEcho(of: name, at: turn.now), name != turn.currentSource {
                // The user picked a microphone (§8): followed, as a pick of the output is.
                return .userSelectedSource(name)
            }
        default:
            break
        }
        return nil
    }
}
