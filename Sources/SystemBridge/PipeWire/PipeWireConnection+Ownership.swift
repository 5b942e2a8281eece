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
    public func removeCreatedMetadata(named name: String) async throws(PipeWireError) -> Int {
        let removed = try loop.withLock { () throws(PipeWireError) -> Int in
            try checkUsable()
            let exported = createdObjects.values.filter { $0.exportedMetadataName == name }
            for object in exported { releaseCreated(object) }
            disconnectIdleExportCore()
            return exported.count
        }
        if removed > 0 { try await sync() }
        return removed
    }
}
