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
    /// The global ids of the metadata objects named `name` this connection created and that
    /// still exist.
    public func createdMetadataIDs(named name: String) -> Set<ObjectID> {
        loop.withLock { Set(createdObjects.values.filter { $0.exportedMetadataName == name }.compactMap(\.globalID)) }
    }

    /// Removes the metadata objects named `name` this connection created and exported (the
    /// `default` metadata Earshot provides without a session manager), when a session manager
    /// comes to provide its own. Returns how many went.
    ///
    /// This connection first lets go of its own binding of each object and waits for PipeWire
    /// to have taken that, and only then destroys the export: destroying an exported object
    /// this connection still had bound stalled the connection (PipeWire 0.3.65, one time in
    /// three with a session manager restarting).
    public func removeCreatedMetadata(named name: String) async throws(PipeWireError) -> Int {
        let exported = try loop.withLock { () throws(PipeWireError) -> [CreatedObject] in
            try checkUsable()
            let exported = createdObjects.values.filter { $0.exportedMetadataName == name }
            for id in exported.compactMap(\.globalID) { boundObjects.removeValue(forKey: id)?.handle.release() }
            return exported
        }
        guard !exported.isEmpty else { return 0 }
        try await sync()
        try loop.withLock { () throws(PipeWireError) in
            try checkUsable()
            for object in exported where createdObjects[ObjectIdentifier(object)] != nil { releaseCreated(object) }
            disconnectIdleExportCore()
        }
        try await sync()
        return exported.count
    }
}
