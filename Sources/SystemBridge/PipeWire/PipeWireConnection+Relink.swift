import AudioGraph
import CPipeWireShims

/// One stream's move: link `output` to `input`, then destroy `obsolete` (its old links).
public struct RelinkMove: Sendable, Equatable {
    public var output: ObjectID
    public var input: ObjectID
    public var obsolete: [ObjectID]

    public init(output: ObjectID, input: ObjectID, obsolete: [ObjectID]) {
        self.output = output
        self.input = input
        self.obsolete = obsolete
    }
}

extension PipeWireConnection {
    /// Moves streams make before break without leaving the loop thread in between: every new
    /// link is requested at once, and the moment all of a move's links are bound (in the
    /// loop's own callback) its obsolete links are destroyed. A move whose links fail keeps
    /// its old ones. Returns each move's new link ids, or its error, once the daemon has
    /// processed every request. (Waiting for `bound` in Swift and then destroying cost two
    /// more thread hops per switch.)
    public func relink(_ moves: [RelinkMove]) async -> [Result<[ObjectID], PipeWireError>] {
        let requests = loop.withLock {
            let requests = moves.map { createLinks(from: $0.output, to: $0.input) }
            let made = requests.flatMap { (try? $0.get()) ?? [] }
            for (move, request) in zip(moves, requests) {
                if case .success(let objects) = request { breakWhenMade(objects, obsolete: move.obsolete, sparing: made) }
            }
            return requests
        }
        let results = await boundIDs(of: requests)
        // The destroys went out from the loop; one round trip and they have run.
        try? await sync()
        // A new link the daemon removed meanwhile (its sink went) is not reported: its id may
        // already name another object.
        return loop.withLock {
            results.map { result in
                result.map { ids in ids.filter { id in createdObjects.values.contains { $0.globalID == id } } }
            }
        }
    }

    /// Destroys the links in `ids` this connection made and that still exist; an id whose
    /// link is gone may already name someone else's object (ids are reused at once), so it
    /// is left alone. Loop lock held.
    private func destroyOwned(_ ids: [ObjectID]) {
        loop.assertLockHeld()
        let owned = Set(ids)
        for object in createdObjects.values {
            guard let id = object.globalID, owned.contains(id) else { continue }
            releaseCreated(object)
            // The request is only marshalled here; it fails when the connection can no longer
            // send (out of memory, the socket broke). Nothing waits for this destroy, so the
            // failure ends the connection as a disconnect would: the owner reconnects and
            // finds the old link still there.
            if let failure = checked(CPipeWire_registry_destroy(registryPointer, id), "destroy \(id)") {
                if self.failure == nil { failEverything(with: failure, report: true) }
                return
            }
        }
    }

    /// Destroys `obsolete` once every object in `objects` is bound; never if one fails, and
    /// never one of the links just `made` (an obsolete link that went meanwhile may have
    /// passed its id on to one of them). Loop lock held.
    private func breakWhenMade(_ objects: [CreatedObject], obsolete: [ObjectID], sparing made: [CreatedObject]) {
        loop.assertLockHeld()
        guard !obsolete.isEmpty else { return }
        var remaining = objects.count
        var failed = false
        for object in objects {
            object.bound.whenSettled { [unowned self] bound in
                if !bound { failed = true }
                remaining -= 1
                guard remaining == 0, !failed else { return }
                let fresh = Set(made.compactMap(\.globalID))
                destroyOwned(obsolete.filter { !fresh.contains($0) })
            }
        }
    }
}
