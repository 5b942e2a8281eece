import AudioGraph
import SystemBridge

/// What the daemon's appliers ask of a PipeWire connection: metadata writes, the `default`
/// metadata when nobody provides it, stream ports and links. `PipeWireConnection` implements
/// it; daemon tests use an in-memory stand-in with controlled time, so the whole input path
/// runs without a PipeWire process.
public protocol PipeWireCommands: AnyObject, Sendable {
    /// The remote this connection talks to, for status and messages.
    var remoteName: String { get }
    /// Sets (or with a nil value, removes) one key of the `default` metadata; `flush` waits
    /// for PipeWire to have taken it. Returns when the write was handed to libpipewire
    /// (`MonotonicClock` nanoseconds, before the flush's round trip).
    @discardableResult
    func setDefaultMetadata(subject: ObjectID, key: String, type: String?, value: String?, flush: Bool) async throws(PipeWireError) -> UInt64
    /// Provides the `default` metadata (standalone: no session manager does) and returns once
    /// the graph shows it.
    func createDefaultMetadata() async throws(PipeWireError)
    /// The ids of the `default` metadata objects Earshot provides.
    func createdDefaultMetadataIDs() -> Set<ObjectID>
    /// Stops providing the `default` metadata (a session manager brought its own): the object
    /// goes. Returns whether there was one.
    func removeCreatedDefaultMetadata() async -> Bool
    /// Whether PipeWire still answers this connection within `timeout`; one that does not is
    /// ended and reported disconnected (the daemon connects again).
    func isResponsive(within timeout: Duration) async -> Bool
    /// Gives a stream one DSP output port per channel.
    func configureDSPPorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError)
    /// Gives a capture stream one DSP input port per channel.
    func configureCapturePorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError)
    /// Make before break: each move's new links, then (once they exist) its obsolete ones go.
    func relink(_ moves: [RelinkMove]) async -> [Result<[ObjectID], PipeWireError>]
    func destroy(_ ids: [ObjectID]) async throws(PipeWireError)
    /// The links this connection made that still exist: per output node, link → input node.
    func ownedLinks() -> [ObjectID: [ObjectID: ObjectID]]
    /// Reads metadata object `id` afresh through a second binding and reports, as property
    /// changes, what the connection's own binding missed; returns how many entries were wrong.
    @discardableResult
    func rereadMetadata(id: ObjectID) async throws(PipeWireError) -> Int
    /// Mutes or unmutes each node (its `Props` `mute`) and returns those the graph shows done
    /// within `timeout` (the node's implementer, an application or pipewire-pulse, applies it).
    func setMute(_ mute: Bool, ofNodes ids: [ObjectID], within timeout: Duration) async -> Set<ObjectID>
    func close()
}

/// Muting through the daemon's PipeWire connection.
struct ConnectionMuting: StreamMuting {
    /// How long the implementers have to apply a mute: a stream held after it may play a
    /// moment on the new sink, so it is short, and logged when it passes.
    static let bound: Duration = .milliseconds(500)
    let connection: any PipeWireCommands

    func setMute(_ mute: Bool, ofStreams ids: [ObjectID]) async -> Set<ObjectID> {
        await connection.setMute(mute, ofNodes: ids, within: Self.bound)
    }
}

extension PipeWireConnection: PipeWireCommands {
    @discardableResult
    public func setDefaultMetadata(subject: ObjectID, key: String, type: String?, value: String?, flush: Bool) async throws(PipeWireError) -> UInt64 {
        try await setMetadata("default", subject: subject, key: key, type: type, value: value, flush: flush)
    }

    public func createDefaultMetadata() async throws(PipeWireError) {
        try await provideMetadata(named: "default")
    }

    public func createdDefaultMetadataIDs() -> Set<ObjectID> {
        providedMetadataIDs(named: "default")
    }

    public func removeCreatedDefaultMetadata() async -> Bool {
        await withdrawProvidedMetadata(named: "default")
    }

    @discardableResult
    public func rereadMetadata(id: ObjectID) async throws(PipeWireError) -> Int {
        try await rereadMetadata(id: id, timeout: .seconds(10))
    }

    /// Each set on its own, at once (a client that does not answer holds only its own streams'
    /// channel: `StreamControlChannel`); done when the stream's client has taken it.
    public func setMute(_ mute: Bool, ofNodes ids: [ObjectID], within timeout: Duration) async -> Set<ObjectID> {
        await withTaskGroup(of: ObjectID?.self) { group in
            for id in ids {
                group.addTask {
                    do {
                        try await self.setMute(mute, ofNode: id, timeout: timeout)
                        return id
                    } catch {
                        return nil
                    }
                }
            }
            return await group.reduce(into: Set<ObjectID>()) { done, id in id.map { _ = done.insert($0) } }
        }
    }

    public func isResponsive(within timeout: Duration) async -> Bool {
        do { try await sync(timeout: timeout) } catch { return false }
        return true
    }

    public func configureDSPPorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError) {
        try await configureDSPPorts(ofNode: id, direction: .output, channels: channels)
    }

    public func configureCapturePorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError) {
        try await configureDSPPorts(ofNode: id, direction: .input, channels: channels)
    }
}
