import WireFields
import ControlProtocol
import AudioGraph
import RoutingPolicy
import Logging
import SystemBridge

/// Writes the configured default of one side (the sink's keys, or the source's: §8) and tells
/// Earshot's own writes from everyone else's. Shared by both appliers (standalone writes the
/// `default` metadata it provides itself); one per side.
///
/// PipeWire reports metadata changes in the order they were made, so the writes in flight
/// form a queue: an echo of one of them is Earshot's (and the writes before it are settled,
/// echoed or coalesced); any other value is someone else's pick. Two quick decisions (on,
/// then off before the first echo) leave two writes in flight, and both echoes are ours.
final class DefaultSinkWriter {
    /// More writes in flight than this means PipeWire is not answering: the oldest are dropped.
    static let inFlightLimit = 16
    private let logger: Logger
    /// The configured defaults Earshot wrote and has not yet seen echoed back, oldest first.
    private(set) var inFlight: [String] = []
    /// How many writes have left the front of `inFlight` (echoed, coalesced or dropped): the
    /// write at `inFlight[i]` is write number `settledWrites + i + 1`.
    private var settledWrites: UInt64 = 0
    /// A control request's write and its echo, timed (`SwitchSpan`, the sink's writer only).
    var spans = SwitchSpanTracker()
    /// A session manager just came (or came back): until the configured default it restores
    /// from its own state has been set to Earshot's decision, the values it writes are its
    /// start-up, not a user's pick.
    private(set) var sessionManagerSettling = false
    /// When the session manager last arrived (daemon clock, ms): a value it writes within
    /// `startUpWindow` of that is its start-up (WirePlumber 0.5 restores the configured default
    /// from its own state a moment after its metadata appears, sometimes after Earshot's write
    /// has echoed), not a user's pick; Earshot's decision is written again over it.
    private var arrivedAt: Int64?
    static let startUpWindow: Int64 = 3_000
    /// `default.configured.audio.sink` / `default.audio.sink`, or the source's keys.
    let configuredKey: String
    let effectiveKey: String
    let direction: AudioDirection

    init(logger: Logger, direction: AudioDirection = .output) {
        self.logger = logger
        self.direction = direction
        configuredKey = direction == .output ? Graph.configuredSinkKey : Graph.configuredSourceKey
        effectiveKey = direction == .output ? Graph.effectiveSinkKey : Graph.effectiveSourceKey
    }

    /// This side's configured and effective default in `graph`.
    func configured(in graph: Graph) -> String? {
        direction == .output ? graph.configuredDefaultSinkName : graph.configuredDefaultSourceName
    }

    func effective(in graph: Graph) -> String? {
        direction == .output ? graph.effectiveDefaultSinkName : graph.effectiveDefaultSourceName
    }

    func reset() {
        dropInFlight()
        sessionManagerSettling = false
        arrivedAt = nil
    }

    /// A `default` metadata object went: the writes Earshot made to it will never echo.
    func metadataRemoved() { dropInFlight() }

    private func dropInFlight() {
        settledWrites += UInt64(inFlight.count)
        inFlight = []
        spans.drop()
    }

    /// A session manager arrived at `now`: what it writes first is its own start-up.
    func sessionManagerArrived(at now: Int64) {
        dropInFlight()
        sessionManagerSettling = true
        arrivedAt = now
    }

    /// The graph says what Earshot decided and nothing is in flight: from now on a value
    /// Earshot did not write is someone's pick.
    func settled(_ target: String, in graph: Graph) {
        if sessionManagerSettling, inFlight.isEmpty, configured(in: graph) == target { sessionManagerSettling = false }
    }

    /// Whether a configured default `name` PipeWire reports is the echo of Earshot's own
    /// write (then it and every earlier write are settled), or a session manager's start-up;
    /// false means someone else chose it.
    /// An echo is taken off the queue even while the session manager settles: else the write
    /// stays in flight for ever and the settling never ends.
    func consumeEcho(of name: String, at now: Int64) -> Bool {
        if let index = inFlight.firstIndex(of: name) {
            inFlight.removeSubrange(...index)
            settledWrites += UInt64(index + 1)
            spans.echoed(ordinal: settledWrites, now: MonotonicClock.nanoseconds)
            return true
        }
        if let arrivedAt, now - arrivedAt < Self.startUpWindow { return true }
        return sessionManagerSettling
    }

    /// Whether the graph or a write in flight already says `target`. While writes of the
    /// configured default are in flight the graph's value is older than them: only the latest
    /// write counts (else a decision back to the old value, made before the echo, would never
    /// be written).
    func isWritten(_ target: String, key: String, in graph: Graph) -> Bool {
        if key == configuredKey { return inFlight.last.map { $0 == target } ?? (configured(in: graph) == target) }
        return effective(in: graph) == target
    }

    nonisolated(nonsending) func write(_ name: String, keys: [String], on connection: any PipeWireCommands, flush: Bool) async {
        let value = MetadataEntry.json(name: name)
        logger.trace("writing \(keys) = \(name) (in flight before: \(inFlight))")
        var ordinal: UInt64 = 0
        if keys.contains(configuredKey) {
            inFlight.append(name)
            if inFlight.count > Self.inFlightLimit {
                let dropped = inFlight.count - Self.inFlightLimit
                inFlight.removeFirst(dropped)
                settledWrites += UInt64(dropped)
            }
            ordinal = settledWrites + UInt64(inFlight.count)
        }
        for key in keys {
            do {
                let sent = try await connection.setDefaultMetadata(
                    subject: 0, key: key, type: "Spa:String:JSON", value: value, flush: flush && key == keys.last)
                if key == configuredKey { spans.wrote(ordinal: ordinal, sent: sent) }
            } catch {
                logger.error("cannot set \(key) to \(name): \(error)")
                if key == configuredKey, let last = inFlight.lastIndex(of: name) {
                    inFlight.remove(at: last)
                    spans.drop()
                }
            }
        }
    }
}

/// Both ways of applying, and which one the session's mode selects.
final class ApplyStage {
    let writer: DefaultSinkWriter
    /// The default source's writer (§8).
    let sourceWriter: DefaultSinkWriter
    private let cooperative: CooperativeApplier
    private let standalone: StandaloneApplier
    /// Calls' targets in the metadata (cooperative, §8).
    private let callTargets: CallTargetWriter
    let logger: Logger
    /// The session manager just went: the first standalone apply checks first that PipeWire
    /// still answers Earshot (a session manager dying while Earshot's bind of its metadata
    /// was pending leaves Earshot's connection unanswered for ever: it is then ended, and the
    /// reconnection takes over).
    private var responsivenessCheckDue = false
    /// The session's mode as this stage last saw it (at the connection, or as it changed).
    private(set) var modeSeen: ApplyMode = .disconnected

    init(logger: Logger) {
        self.logger = logger
        writer = DefaultSinkWriter(logger: logger)
        sourceWriter = DefaultSinkWriter(logger: logger, direction: .input)
        cooperative = CooperativeApplier(writer: writer, sourceWriter: sourceWriter, logger: logger)
        standalone = StandaloneApplier(writer: writer, sourceWriter: sourceWriter, logger: logger)
        callTargets = CallTargetWriter(logger: logger)
    }

    /// A new connection, whose session is in `mode`.
    func reset(mode: ApplyMode) {
        modeSeen = mode
        responsivenessCheckDue = false
        writer.reset()
        sourceWriter.reset()
        cooperative.reset()
        standalone.reset()
        callTargets.reset()
    }

    /// The mode changed (a session manager came or went): a write in flight may never echo.
    func modeChanged(to mode: ApplyMode, at now: Int64) {
        modeSeen = mode
        for writer in [writer, sourceWriter] {
            if mode == .cooperative { writer.sessionManagerArrived(at: now) } else { writer.reset() }
        }
        responsivenessCheckDue = mode == .standalone
    }

    /// - Parameters:
    ///   - holdsFoundDefault: the decision is the default found at start or reconnect, still
    ///     held (`PolicyEngine.holdsFoundDefault`).
    ///   - source: the input's decision (§8), when the policy decides it: the default source
    ///     (nil: none eligible) and whether it is the one found at start, still held.
    ///   - now: the daemon's clock (a stream handed back to the session manager gets a grace).
    ///   - calls: each call's source (§8 `bluetooth-microphone = "calls"`).
    nonisolated(nonsending) func apply(
        _ target: String?, mode: ApplyMode, sessionManager: SessionManager?, graph: Graph, on connection: (any PipeWireCommands)?,
        holdsFoundDefault: Bool = false, source: (name: String?, holdsFound: Bool)? = nil, calls: StreamTargets = StreamTargets(),
        at now: Milliseconds = 0
    ) async {
        guard let connection else { return }
        if let target {
            await applyOutput(
                target, mode: mode, sessionManager: sessionManager, graph: graph, on: connection, holdsFoundDefault: holdsFoundDefault, at: now)
        }
        if let source, let name = source.name {
            switch mode {
            case .cooperative: await cooperative.applySource(name, graph: graph, on: connection, holdsFoundSource: source.holdsFound)
            case .standalone: await standalone.applySource(name, graph: graph, calls: calls, on: connection)
            case .disconnected: return
            }
        }
        if mode == .cooperative { await callTargets.apply(calls, graph: graph, on: connection) }
    }

    /// When the apply stage wants to run again with no other input (a hand-back's grace).
    var nextDeadline: Milliseconds? { standalone.nextDeadline }

    private nonisolated(nonsending) func applyOutput(
        _ target: String, mode: ApplyMode, sessionManager: SessionManager?, graph: Graph, on connection: any PipeWireCommands,
        holdsFoundDefault: Bool, at now: Milliseconds
    ) async {
        switch mode {
        case .cooperative:
            cooperative.pinsPinnedStreams = sessionManager?.movesPinnedStreams ?? false
            cooperative.holdsFoundDefault = holdsFoundDefault
            // Standalone's metadata and links go back first: they must never outlive the
            // session manager's arrival longer than its own linking takes.
            await standalone.removeOwnMetadata(graph, on: connection)
            await cooperative.apply(target, graph: graph, on: connection)
            // Streams Earshot linked before the session manager came: only once its metadata
            // holds the decision, so they never play elsewhere first.
            if graph.defaultMetadata != nil, graph.configuredDefaultSinkName == target, !writer.sessionManagerSettling {
                await standalone.handBackStreams(
                    graph, to: target, sessionManagerRelinks: sessionManager?.relinksFreedStreams ?? false, at: now, on: connection)
            }
        case .standalone:
            if responsivenessCheckDue {
                responsivenessCheckDue = false
                guard await connection.isResponsive(within: .seconds(2)) else {
                    logger.warning("PipeWire stopped answering Earshot's connection as the session manager went (a PipeWire fault with a bind pending): connecting again")
                    return
                }
            }
            await standalone.apply(target, graph: graph, on: connection)
        case .disconnected: return
        }
    }
}
