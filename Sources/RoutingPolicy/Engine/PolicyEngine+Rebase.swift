import AudioGraph

extension PolicyEngine {
    /// A new engine over `graph` that keeps this one's config, registrations and learnt host
    /// addresses, but none of its decisions: for the first real graph after inputs that came
    /// before it (registrations restored from disk, BlueZ answering before PipeWire). Its
    /// `.start` is then the first decision (`initial`), as if those inputs had
    /// arrived with the graph: the previous default is the graph's, as for any engine made
    /// over a graph (docs/policy.md).
    public func rebased(onto graph: Graph, at now: Milliseconds) -> PolicyEngine {
        var fresh = PolicyEngine(graph: graph, config: config)
        _ = fresh.handle(.hostAddressesChanged(learnedHostAddresses), at: now)
        for registration in accessories.entries.values.map(\.registration).sorted(by: { $0.identity < $1.identity }) {
            _ = fresh.handle(.accessory(.register(registration.identity, reporter: registration.reporter, registration.configuration)), at: now)
        }
        // Seeding decided over the new graph; those decisions were never applied or reported.
        fresh.forEachSide { side in
            side.currentDefault = EndpointSide.configured(side.direction, in: graph) ?? EndpointSide.effective(side.direction, in: graph)
            side.currentPort = nil
            side.restoreTargets = [:]
        }
        fresh.lastDecision = nil
        return fresh
    }
}
