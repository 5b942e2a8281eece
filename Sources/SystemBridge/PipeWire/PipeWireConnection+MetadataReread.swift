import AudioGraph
import CPipeWire
import CPipeWireShims

/// Reading a metadata object afresh, for the events PipeWire's metadata module drops.
///
/// When a client binds a metadata object another client exports, the module pings the
/// exporter and, until the answer, passes the exporter's property events only to the bindings
/// still waiting for their first properties (`module-metadata/metadata.c`, `metadata_property`:
/// `impl->pending == 0 || d->pong_seq != 0`; 0.3.65, 1.4.2 and later alike). A change made in that
/// window never reaches any binding already settled: a wpctl pick (wpctl binds the `default`
/// metadata twice, and writes once the first bind is answered) or the write's echo can be lost
/// to Earshot for good (issue 28, docs/reliability.md). A binding made afterwards gets every
/// property: this makes one, and puts right what the connection's own binding missed.
extension PipeWireConnection {
    /// Binds metadata object `id` a second time, waits for its properties (the connection is
    /// held busy until the exporter answered the bind, so a round trip returns after them), and
    /// records a property event for each entry the graph has wrong: changed, missing or gone.
    /// Returns how many there were (0: nothing was missed). The second binding is dropped after.
    @discardableResult
    public func rereadMetadata(id: ObjectID, timeout: Duration = .seconds(10)) async throws(PipeWireError) -> Int {
        guard let reread = try beginReread(id: id) else { return 0 }
        return try await finishReread(reread, timeout: timeout)
    }

    /// The second binding, requested (sent with the loop's next flush).
    func beginReread(id: ObjectID) throws(PipeWireError) -> MetadataReread? {
        try loop.withLock { () throws(PipeWireError) -> MetadataReread? in
            try checkUsable()
            guard let bound = boundObjects[id], bound.kind == .metadata,
                let proxy = CPipeWire_registry_bind(registryPointer, id, TrackedKind.metadata.typePointer, bound.version)
            else { return nil }
            let reread = MetadataReread(id: id, proxy: OpaquePointer(proxy))
            metadataRereads[ObjectIdentifier(reread)] = reread
            let listening = CPipeWire_metadata_add_listener(
                OpaquePointer(proxy), reread.handle.hook, CallbackTables.metadataReread, Unmanaged.passUnretained(reread).toOpaque())
            guard checked(listening, "add a listener to metadata \(id) read again") == nil else {
                metadataRereads.removeValue(forKey: ObjectIdentifier(reread))?.handle.release()
                return nil
            }
            return reread
        }
    }

    /// Waits for the second binding's properties, puts the graph right, drops the binding.
    func finishReread(_ reread: MetadataReread, timeout: Duration) async throws(PipeWireError) -> Int {
        let id = reread.id
        defer { loop.withLock { metadataRereads.removeValue(forKey: ObjectIdentifier(reread))?.handle.release() } }
        try await sync(timeout: timeout)
        return loop.withLock { () -> Int in
            // Gone meanwhile (its global removed, or the connection failed): nothing to put right.
            guard failure == nil, !reread.overflowed, boundObjects[id] != nil, let current = graph.metadata[id] else { return 0 }
            var fresh = Metadata(id: id, props: current.props)
            for event in reread.events { fresh.set(subject: event.subject, key: event.key, type: event.type, value: event.value) }
            var corrected = 0
            for (key, entry) in fresh.entries.sorted(by: { $0.key < $1.key }) where current.entries[key] != entry {
                record(.metadataProperty(metadata: id, subject: key.subject, key: key.key, type: entry.type, value: entry.value))
                corrected += 1
            }
            for key in current.entries.keys.sorted() where fresh.entries[key] == nil {
                record(.metadataProperty(metadata: id, subject: key.subject, key: key.key, type: nil, value: nil))
                corrected += 1
            }
            return corrected
        }
    }
}
