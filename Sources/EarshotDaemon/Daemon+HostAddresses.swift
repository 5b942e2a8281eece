import RoutingPolicy

extension Daemon {
    /// This host's Bluetooth adapters as BlueZ lists them now (empty when BlueZ is absent):
    /// they join the config's `host-addresses` for the source-identifier rule (§1).
    func adapterAddressesChanged(_ adapters: [HostAddress]) async {
        let listed = adapters.isEmpty ? "none" : adapters.map(\.description).joined(separator: ", ")
        logger.info("BlueZ adapters: \(listed)")
        guard lastDecision != nil else {
            // Nothing decided yet: the engine is rebuilt over the first graph and takes the
            // learnt addresses along; deciding now would pre-empt the initial decision.
            _ = engine.handle(.hostAddressesChanged(adapters), at: now)
            return
        }
        if await process(engine.handle(.hostAddressesChanged(adapters), at: now)) { saveState() }
    }
}
