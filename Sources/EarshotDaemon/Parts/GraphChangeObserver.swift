import AudioGraph
import Logging
import RoutingPolicy

/// A part that follows the graph change by change as the engine takes it, and classifies the
/// changes it cares about itself (as WirePlumber's hooks declare their event interests, and
/// GRDB's transaction observers the kinds of event they observe): the daemon's turn over a
/// burst is one loop over its observers, which knows none of their cases.
///
/// A turn is one input (`Daemon.handle`). A `.graphChanged` burst is taken change by change
/// within it, and each observer is told of every change of a kind it observes, before and after
/// the engine takes it: per change, since a later change of the same burst can hide an earlier
/// one (a stream relinked, a default written over, an object's id reused).
protocol GraphChangeObserver {
    /// The kinds of change this part is told of.
    var observedKinds: GraphChangeKinds { get }
    /// Before the engine takes `change`: `turn.graph` is the graph as it was.
    func graphWillChange(_ change: GraphChange, in turn: GraphTurn)
    /// After it: `turn.graph` holds the change. Returns the user's pick the change is, if it is
    /// one: the engine takes it, and its decision supersedes the change's own.
    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput?
}

extension GraphChangeObserver {
    func graphWillChange(_ change: GraphChange, in turn: GraphTurn) {}
    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? { nil }
}

/// What an observer reads of the daemon as one change is taken.
struct GraphTurn {
    /// Before the engine took the change, or after (`GraphChangeObserver`).
    let graph: Graph
    let session: GraphSession
    /// The engine's current defaults (after the change: a pick of either is no pick).
    let currentDefault: String?
    let currentSource: String?
    let now: Milliseconds
}

/// Kinds of graph change, as a set an observer declares (a bit each: asked per change).
struct GraphChangeKinds: OptionSet, Hashable {
    let rawValue: UInt8
    static let node = Self(rawValue: 1 << 0)
    static let port = Self(rawValue: 1 << 1)
    static let link = Self(rawValue: 1 << 2)
    static let device = Self(rawValue: 1 << 3)
    static let client = Self(rawValue: 1 << 4)
    static let metadata = Self(rawValue: 1 << 5)
    static let metadataProperty = Self(rawValue: 1 << 6)
    static let removed = Self(rawValue: 1 << 7)
}

extension GraphChange {
    var kind: GraphChangeKinds {
        switch self {
        case .node: .node
        case .port: .port
        case .link: .link
        case .device: .device
        case .client: .client
        case .metadata: .metadata
        case .metadataProperty: .metadataProperty
        case .removed: .removed
        }
    }
}

/// The trace lines about the sinks and devices a burst brings (their ports and routes decide
/// what the policy can rank).
struct GraphTrace: GraphChangeObserver {
    let logger: Logger
    var observedKinds: GraphChangeKinds { [.node, .device] }

    func graphWillChange(_ change: GraphChange, in turn: GraphTurn) {
        switch change {
        case .device(let device):
            logger.trace("device \(device.id) \(device.props["device.name"] ?? "?"): routes \(device.routes.map(Self.describe) ?? "none")")
        case .node(let node) where node.isAudioSink:
            logger.trace("sink \(node.id) \(node.name ?? "?"): input ports \(node.inputPorts.map(String.init) ?? "?")")
        default:
            break
        }
    }

    /// `speaker yes, headphones no; active headphones@0` for a trace line.
    static func describe(_ routes: DeviceRoutes) -> String {
        routes.all.map { "\($0.name) \($0.available.rawValue)" }.joined(separator: ", ")
            + "; active " + routes.active.map { "\($0.name)@\($0.device.map(String.init) ?? "?") \($0.available.rawValue)" }.joined(separator: ", ")
    }
}
