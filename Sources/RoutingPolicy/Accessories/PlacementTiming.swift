/// The placement the policy acts on, which lags the reported one by `on-delay` when an accessory
/// goes on and by `off-grace` when it comes off, so adjusting a headset does not bounce the output.
public struct PlacementTiming: Sendable, Hashable {
    /// The placement in effect; nil until the reporter says anything.
    public var effective: Placement?
    /// When the accessory was last (effectively) put on; nil while not worn.
    public var wornSince: Milliseconds?
    /// A worn/not-worn transition waiting for its delay.
    public var pending: PendingPlacement?

    public init(effective: Placement? = nil, wornSince: Milliseconds? = nil, pending: PendingPlacement? = nil) {
        self.effective = effective
        self.wornSince = wornSince
        self.pending = pending
    }

    public var isWorn: Bool { effective?.isWorn ?? false }
}

public struct PendingPlacement: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case onDelay = "on-delay"
        case offGrace = "off-grace"
    }

    public var placement: Placement
    public var due: Milliseconds
    public var kind: Kind
}

/// What a reported placement does to the timing: nothing yet, a transition now, or a change
/// that is not a worn/not-worn transition (in-ear → on-head, unknown → off-head).
enum PlacementStep: Equatable {
    case none
    case transition(toWorn: Bool)
}

extension PlacementTiming {
    /// Applies a reported placement at `now`. A report that undoes a pending transition cancels
    /// it: a flap inside the delay changes nothing.
    mutating func report(_ placement: Placement, at now: Milliseconds, onDelay: Milliseconds, offGrace: Milliseconds) -> PlacementStep {
        if placement.isWorn == isWorn {
            // Same side as what is in effect: a flap back inside the delay, or a change that is
            // no transition (in-ear → on-head, unknown → off-head). Either way, at once.
            pending = nil
            effective = placement
            return .none
        }
        let delay = placement.isWorn ? onDelay : offGrace
        if delay <= 0 { return complete(placement, at: now) }
        if pending?.placement.isWorn != placement.isWorn {
            pending = PendingPlacement(placement: placement, due: now + delay, kind: placement.isWorn ? .onDelay : .offGrace)
        } else {
            pending?.placement = placement
        }
        return .none
    }

    /// Completes the pending transition if it is due at `now`.
    mutating func fire(at now: Milliseconds) -> PlacementStep {
        guard let pending, pending.due <= now else { return .none }
        return complete(pending.placement, at: pending.due)
    }

    private mutating func complete(_ placement: Placement, at now: Milliseconds) -> PlacementStep {
        pending = nil
        effective = placement
        wornSince = placement.isWorn ? now : nil
        return .transition(toWorn: placement.isWorn)
    }
}
