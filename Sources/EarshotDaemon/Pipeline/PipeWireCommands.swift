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
    /// for PipeWire to have taken it.
    func setDefaultMetadata(subject: ObjectID, key: String, type: String?, value: String?, flush: Bool) async throws(PipeWireError)
    /// Creates the `default` metadata (standalone: no session manager provides one) and
    /// returns once the graph shows it.
    func createDefaultMetadata() async throws(PipeWireError)
    /// The ids of the `default` metadata objects this connection created.
    func createdDefaultMetadataIDs() -> Set<ObjectID>
    /// Removes the `default` metadata this connection created (a session manager came to
    /// provide its own). Returns whether there was one.
    func removeCreatedDefaultMetadata() async throws(PipeWireError) -> Bool
    /// Gives a stream one DSP output port per channel.
    func configureDSPPorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError)
    /// Make before break: each move's new links, then (once they exist) its obsolete ones go.
    func relink(_ moves: [RelinkMove]) async -> [Result<[ObjectID], PipeWireError>]
    func destroy(_ ids: [ObjectID]) async throws(PipeWireError)
    /// The links this connection made that still exist: per output node, link → input node.
    func ownedLinks() -> [ObjectID: [ObjectID: ObjectID]]
    func close()
}

extension PipeWireConnection: PipeWireCommands {
    public func setDefaultMetadata(subject: ObjectID, key: String, type: String?, value: String?, flush: Bool) async throws(PipeWireError) {
        try await setMetadata("default", subject: subject, key: key, type: type, value: value, flush: flush)
    }

    public func createDefaultMetadata() async throws(PipeWireError) {
        _ = try await createMetadata(named: "default")
        _ = try await waitUntil("the default metadata Earshot created") { $0.defaultMetadata != nil }
    }

    public func createdDefaultMetadataIDs() -> Set<ObjectID> {
        createdMetadataIDs(named: "default")
    }

    public func removeCreatedDefaultMetadata() async throws(PipeWireError) -> Bool {
        try await removeCreatedMetadata(named: "default") > 0
    }

    public func configureDSPPorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError) {
        try await configureDSPPorts(ofNode: id, direction: .output, channels: channels)
    }
}
