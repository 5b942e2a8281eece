import AudioGraph
import CPipeWire
#if canImport(Glibc)
import Glibc
#endif
import CPipeWireShims

/// The commands a connection carries to PipeWire: round trips, metadata, links, DSP ports,
/// destroying what it made. Each takes the loop lock (`PipeWireConnection` says why).
extension PipeWireConnection {

    /// A round trip to the daemon: everything sent before it has been processed.
    ///
    /// A round trip that gets no answer within `timeout` ends the connection (reported as a
    /// disconnection, so its owner connects again): the daemon is no longer processing this
    /// client's messages. PipeWire does that to a client whose bind of another client's
    /// metadata is pending when that client dies (the binder stays "busy" for ever; seen with
    /// WirePlumber killed right after it started, on 0.3.65 and 1.4.2), and nothing sent on
    /// such a connection will ever be done.
    public func sync(timeout: Duration = .seconds(10)) async throws(PipeWireError) {
        let promise = try loop.withLock { () throws(PipeWireError) -> LoopPromise<Void> in
            try checkUsable()
            let seq = try check(CPipeWire_core_sync(core, UInt32(PW_ID_CORE), 0), "pw_core_sync")
            let promise = LoopPromise<Void>()
            pendingSyncs[seq] = promise
            return promise
        }
        do {
            try await promise.value(on: loop, timeout: timeout, what: "a round trip to PipeWire")
        } catch {
            if case .timedOut = error {
                loop.withLock {
                    failEverything(with: .disconnected("PipeWire stopped answering this connection (no reply to a round trip in \(timeout))"), report: true)
                }
            }
            throw error
        }
    }

    /// Waits until every route reading in flight has ended or passed its deadline.
    func routesSettled() async throws(PipeWireError) {
        let promise = try loop.withLock { () throws(PipeWireError) -> LoopPromise<Void> in
            try checkUsable()
            let promise = LoopPromise<Void>()
            if routeReadingsAwaited { routesSettledWaiters.append(promise) } else { promise.fulfill(()) }
            return promise
        }
        // Each reading ends by its own deadline; this one only guards against a lost timer.
        try await promise.value(on: loop, timeout: deviceParamsDeadline + .seconds(10), what: "the devices' routes")
    }

    /// Sets (or with a nil value, removes) one key of the metadata object named `metadataName`,
    /// as `pw-metadata` does, and waits for the daemon to take it (unless `flush` is false:
    /// several writes in a row need one round trip, after the last). Returns when the write was
    /// handed to libpipewire (`MonotonicClock`, taken as `pw_metadata_set_property` returned,
    /// before the flush's round trip).
    @discardableResult
    public func setMetadata(
        _ metadataName: String = "default", subject: ObjectID = 0, key: String, type: String? = nil, value: String?,
        flush: Bool = true
    ) async throws(PipeWireError) -> UInt64 {
        let sent = try writeMetadata(metadataName, subject: subject, key: key, type: type, value: value)
        if flush { try await sync() }
        return sent
    }

    /// `setMetadata`'s write, without the round trip: handed to libpipewire, sent with the
    /// loop's next flush (the lock is recursive: a caller holding it sends more in that flush).
    func writeMetadata(_ metadataName: String, subject: ObjectID, key: String, type: String?, value: String?) throws(PipeWireError) -> UInt64 {
        try loop.withLock { () throws(PipeWireError) -> UInt64 in
            try checkUsable()
            // Two objects of one name exist while a session manager takes over from Earshot's
            // own: the session manager's is the one that counts. Earshot's own are on its
            // provider connections, or withdrawn and not yet gone (a write there is lost).
            let ours = Set(createdObjects.values.compactMap(\.globalID))
                .union(providers.values.map(\.id)).union(withdrawnMetadataIDs)
            let candidates = graph.metadata.values.filter { $0.name == metadataName }.map(\.id).sorted()
            guard let id = candidates.first(where: { !ours.contains($0) }) ?? candidates.first,
                let object = boundObjects[id]
            else { throw PipeWireError.noSuchMetadata(metadataName) }
            try check(
                CPipeWire_metadata_set_property(object.handle.proxy, subject, key, type, value),
                "pw_metadata_set_property \(key) on \"\(metadataName)\"")
            return MonotonicClock.nanoseconds()
        }
    }

    /// Links `output`'s output ports to `input`'s input ports, channel by channel, and returns
    /// the new links' ids once the daemon has created them all. The links are owned by this
    /// connection: they go when it does, unless `linger` keeps them in the graph.
    public func link(output: ObjectID, input: ObjectID, linger: Bool = false) async throws(PipeWireError) -> [ObjectID] {
        try await link([(output, input)], linger: linger)[0].get()
    }

    /// Links several node pairs at once: every request goes out before any reply is awaited,
    /// so n streams cost one round trip, not n. Returns each pair's link ids, or its error.
    public func link(_ nodePairs: [(output: ObjectID, input: ObjectID)], linger: Bool = false) async -> [Result<[ObjectID], PipeWireError>] {
        let requests = loop.withLock { nodePairs.map { createLinks(from: $0.output, to: $0.input, linger: linger) } }
        return await boundIDs(of: requests)
    }

    /// Requests the links from `output`'s output ports to `input`'s input ports (loop lock held).
    func createLinks(from output: ObjectID, to input: ObjectID, linger: Bool = false) -> Result<[CreatedObject], PipeWireError> {
        loop.assertLockHeld()
        do throws(PipeWireError) { try checkUsable() } catch { return .failure(error) }
        let pairs = graph.portPairs(from: output, to: input)
        guard !pairs.isEmpty else { return .failure(.noMatchingPorts(output: output, input: input)) }
        var objects: [CreatedObject] = []
        for pair in pairs {
            var props: Properties = [
                "link.output.node": String(output), "link.output.port": String(pair.output.id),
                "link.input.node": String(input), "link.input.port": String(pair.input.id),
            ]
            if linger { props["object.linger"] = "true" }
            do throws(PipeWireError) {
                let object = try create(
                    factory: "link-factory", kind: .link, props: props,
                    description: "link \(output):\(pair.output.id) → \(input):\(pair.input.id)")
                object.linkEnds = LinkEnds(output: output, input: input)
                objects.append(object)
            } catch {
                // A link that cannot even be requested fails the pair; its other links go too.
                for object in objects { releaseCreated(object) }
                return .failure(error)
            }
        }
        return .success(objects)
    }

    /// Waits for each request's objects to be bound: their global ids, or the request's error
    /// (its objects are then released).
    /// One deadline for the whole batch, not one per object: a daemon that never answers
    /// (seen with a stream WirePlumber 0.4 was stuck adopting) must not hold the caller for
    /// ten seconds per link.
    func boundIDs(
        of requests: [Result<[CreatedObject], PipeWireError>], timeout: Duration = .seconds(3)
    ) async -> [Result<[ObjectID], PipeWireError>] {
        let deadline = ContinuousClock.now + timeout
        var results: [Result<[ObjectID], PipeWireError>] = []
        for request in requests {
            guard case .success(let pending) = request else {
                results.append(request.map { _ in [] })
                continue
            }
            var ids: [ObjectID] = []
            do throws(PipeWireError) {
                for object in pending {
                    let left = max(.milliseconds(1), ContinuousClock.now.duration(to: deadline))
                    ids.append(try await object.bound.value(on: loop, timeout: left, what: object.description))
                }
                results.append(.success(ids))
            } catch {
                loop.withLock { for object in pending { releaseCreated(object) } }
                results.append(.failure(error))
            }
        }
        return results
    }

    /// Gives a node one DSP port per channel on its output side (or input side), as a session
    /// manager does for new streams: without it a stream has no ports to link. `channels` are
    /// positions (`FL`, `FR`…), usually the target sink's, so the stream's own converter mixes.
    public func configureDSPPorts(
        ofNode id: ObjectID, direction: PortDirection = .output, channels: [String] = ["FL", "FR"], rate: UInt32 = 48000
    ) async throws(PipeWireError) {
        let positions = channels.map(AudioChannel.position)
        try loop.withLock { () throws(PipeWireError) in
            try checkUsable()
            guard let object = boundObjects[id], object.kind == .node else { throw PipeWireError.noSuchObject(id) }
            try check(
                CPipeWire_node_set_port_config_dsp(
                    object.handle.proxy, direction == .output ? SPA_DIRECTION_OUTPUT : SPA_DIRECTION_INPUT,
                    rate, UInt32(positions.count), positions),
                "set PortConfig on \(id)")
        }
    }

    /// Destroys a link (or any object the daemon lets this client destroy).
    public func destroy(_ id: ObjectID) async throws(PipeWireError) {
        try await destroy([id])
    }

    /// Destroys several objects with one round trip.
    public func destroy(_ ids: [ObjectID]) async throws(PipeWireError) {
        try loop.withLock { () throws(PipeWireError) in try destroyNow(ids) }
        try await sync()
    }

    /// Sends the destroy requests (loop lock held); the caller syncs if it must know they ran.
    func destroyNow(_ ids: [ObjectID]) throws(PipeWireError) {
        loop.assertLockHeld()
        try checkUsable()
        for id in ids {
            if let owned = createdObjects.values.first(where: { $0.globalID == id }) {
                releaseCreated(owned)
            }
            try check(CPipeWire_registry_destroy(registry, id), "destroy \(id)")
        }
    }

    /// Creates a metadata object (by default the `default` one a session manager would
    /// provide), implemented in this process and exported to the daemon as WirePlumber does
    /// (the daemon's `metadata` factory would make this connection its implementer, and a
    /// connection that binds an object it implements stalls). It lives as long as this
    /// connection; `provideMetadata` gives it a connection of its own.
    public func createMetadata(named name: String = "default") async throws(PipeWireError) -> ObjectID {
        let object = try loop.withLock { () throws(PipeWireError) -> CreatedObject in
            try checkUsable()
            return try exportMetadata(named: name)
        }
        return try await object.bound.value(on: loop, what: "metadata \"\(name)\" to be exported")
    }
}
