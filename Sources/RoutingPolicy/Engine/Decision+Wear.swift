/// What a decision says about worn accessories, for whoever acts on wear besides routing
/// (MPRIS pause/resume): read from the ranking, so it is exactly what the policy used.
extension Decision {
    /// The worn audio-switching accessory `sink` belongs to, if this decision ranked it worn.
    public func wornAccessory(of sink: String) -> AccessoryIdentity? {
        guard let ranked = ranking.first(where: { $0.node == sink }), ranked.rank.worn != nil else { return nil }
        return ranked.rank.accessory
    }

    /// True when this decision ranks a sink of `accessory` as worn (it is on and eligible).
    public func ranksWorn(_ accessory: AccessoryIdentity) -> Bool {
        ranking.contains { $0.rank.accessory == accessory && $0.rank.worn != nil }
    }

    /// True when this decision rejects `sink` because its accessory is off the head.
    public func rejectsOffHead(_ sink: String) -> Bool {
        rejected.contains { rejected in
            if rejected.node == sink, case .offHead = rejected.rejection { return true }
            return false
        }
    }

    /// True when this decision rejects `sink` because its accessory plays for another host.
    public func rejectsForOtherHost(_ sink: String) -> Bool {
        rejected.contains { rejected in
            if rejected.node == sink, case .otherHost = rejected.rejection { return true }
            return false
        }
    }

    /// True when `sink` is no longer in the graph as this decision saw it.
    public func lacks(_ sink: String) -> Bool {
        !ranking.contains { $0.node == sink } && !rejected.contains { $0.node == sink && $0.rejection != .gone }
    }
}
