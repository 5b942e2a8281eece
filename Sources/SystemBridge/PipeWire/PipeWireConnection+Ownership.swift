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
    /// object's only owner (it binds nothing, and exports on its own core):
    /// `withdrawProvidedMetadata()` destroys the object and closes it, as a
    /// session manager's goes when it exits.
    public func provideMetadata(named name: String = "default") async throws(PipeWireError) {
        let provider = try await PipeWireConnection.connect(
            remote: remoteArgument, applicationName: "earshot [\(name) metadata]", tracksGraph: false)
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
    ///
    /// The object goes first, destroyed through the registry; only then the provider closes.
    /// PipeWire marks a client that binds a metadata object another client exports "busy"
    /// (its messages wait) until the exporter answers a ping. When the exporter's side goes
    /// first (it closes), a bind still pending is never cleared (the metadata module drops the
    /// binding's hook before it runs): that client stays busy for ever. Seen live, one
    /// hand-over in four: a returning WirePlumber binding Earshot's metadata as Earshot closed
    /// the provider hung for good, and so did every client binding WirePlumber's metadata
    /// after it. Destroying the global clears every pending bind first (0.3.65 and 1.4.2).
    @discardableResult
    public func withdrawProvidedMetadata(named name: String = "default") async -> Bool {
        let withdrawn = loop.withLock { () -> (connection: PipeWireConnection, id: ObjectID)? in
            guard let withdrawn = providers.removeValue(forKey: name) else { return nil }
            if graph.metadata[withdrawn.id] != nil { withdrawnMetadataIDs.insert(withdrawn.id) }
            return withdrawn
        }
        guard let withdrawn else { return false }
        // Fails only when this connection is gone: closing the provider is all that is left.
        try? await destroy([withdrawn.id])
        withdrawn.connection.close()
        return true
    }
}
