import AudioGraph

/// The nodes a link this connection made joins.
struct LinkEnds {
    var output: ObjectID
    var input: ObjectID
}

extension PipeWireConnection {
    /// The links this connection made that still exist (bound, not yet removed or destroyed):
    /// for each output node, every such link and the input node it goes to. The connection is
    /// the one owner of this fact: a link leaves the answer the moment its proxy is released
    /// (destroyed by us, or removed by the daemon), so a reused global id is never mistaken
    /// for one of ours.
    public func ownedLinks() -> [ObjectID: [ObjectID: ObjectID]] {
        loop.withLock {
            var owned: [ObjectID: [ObjectID: ObjectID]] = [:]
            for object in createdObjects.values {
                guard let id = object.globalID, let ends = object.linkEnds else { continue }
                owned[ends.output, default: [:]][id] = ends.input
            }
            return owned
        }
    }
}

extension PipeWireConnection {
    /// Provides the `default` metadata (standalone: no session manager does) from a connection
    /// of its own, and returns once this connection's graph shows it. That connection is the
    /// object's only owner: `withdrawProvidedMetadata()` closes it and the object goes, as a
    /// session manager's goes when it exits. (Destroying an exported object in place, on a
    /// connection that stays, was seen to stall that connection's events, one time in three:
    /// PipeWire 0.3.65 and 1.4.2, a session manager restarting.)
    public func provideMetadata(named name: String = "default") async throws(PipeWireError) {
        let provider = try await PipeWireConnection.connect(remote: remoteArgument, applicationName: "earshot [\(name) metadata]")
        provider.loop.withLock { provider.eventQueue.discards = true }
        let id: ObjectID
        do {
            id = try await provider.createMetadata(named: name)
        } catch {
            provider.close()
            throw error
        }
        let previous = loop.withLock { () -> PipeWireConnection? in
            defer { providers[name] = (provider, id) }
            return providers[name]?.connection
        }
        previous?.close()
        _ = try await waitUntil("the \(name) metadata Earshot provides") { $0.metadata[id] != nil }
    }

    /// The global ids of the metadata objects this connection provides (`provideMetadata`).
    public func providedMetadataIDs(named name: String = "default") -> Set<ObjectID> {
        loop.withLock { providers[name].map { [$0.id] } ?? [] }
    }

    /// Closes the connection that provides the metadata named `name`: the object goes with it.
    /// Returns whether there was one.
    @discardableResult
    public func withdrawProvidedMetadata(named name: String = "default") -> Bool {
        let provider = loop.withLock { () -> PipeWireConnection? in
            guard let withdrawn = providers.removeValue(forKey: name) else { return nil }
            if graph.metadata[withdrawn.id] != nil { withdrawnMetadataIDs.insert(withdrawn.id) }
            return withdrawn.connection
        }
        provider?.close()
        return provider != nil
    }
}
