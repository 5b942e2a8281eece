import RoutingPolicy

extension Daemon {
    /// This host's Bluetooth adapters as BlueZ lists them now (empty when BlueZ is absent):
    /// they join the config's `host-addresses` for the source-identifier rule (§1).
    func adapterAddressesChanged(_ adapters: [HostAddress]) async {
        let listed = adapters.isEmpty ? "none" : adapters.map(\.description).joined(separator: ", ")
        logger.info("BlueZ adapters: \(listed)")
        let outcome = engine.handle(.hostAddressesChanged(adapters), at: now)
        announceHostAddresses()
        // Nothing decided yet: the engine is rebuilt over the first graph and takes the learnt
        // addresses along; deciding now would pre-empt the initial decision.
        guard lastDecision != nil else { return }
        if await process(outcome) { saveState() }
    }

    /// Tells subscribers the host addresses in use when they (or their origins) differ from
    /// what they were last told. Called after the engine took the input and before its decision
    /// is processed, so the event comes before the route change it causes.
    func announceHostAddresses() {
        let current = engine.knownHostAddresses
        guard let change = HostAddressesChange(at: Self.wallClock, from: announcedHostAddresses, to: current) else { return }
        announcedHostAddresses = current
        publish(.hostAddressesChanged(change))
    }
}
