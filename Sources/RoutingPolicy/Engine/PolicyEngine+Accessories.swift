/// The accessory API (register / update / unregister) applied to the engine. A refused request
/// changes nothing and comes back as the decision's `error`.
extension PolicyEngine {
    mutating func applyAccessory(_ request: AccessoryRequest, at now: Milliseconds) -> Decision {
        let trigger = DecisionTrigger.accessory(verb: request.verb, request.identity)
        switch request {
        case .register(let identity, let reporter, let configuration):
            if let entry = reporterRestriction(identity, reporter: reporter) {
                let error = AccessoryError(
                    .invalidRequest,
                    "\(entry.location?.fileLine ?? "the config") lets only \(entry.reporter ?? "?") report \(identity): run that reporter, or change `reporter` in the config")
                return decide(trigger, reason: nil, at: now, error: error)
            }
            if let error = accessories.validateRegister(identity, reporter: reporter, configuration) {
                return decide(trigger, reason: nil, at: now, error: error)
            }
            let previous = accessories[identity]?.timing
            accessories.store(
                AccessoryRegistration(identity: identity, reporter: reporter, configuration: configuration, registeredAt: now),
                timing: Self.timingAtRegistration(configuration.placement, previous: previous, at: now))
            // A worn placement Earshot did not know is a placement transition (§5): it ends an
            // override, as a headset that connects does. Repeating the known one (a reporter
            // reconnecting, a restart) is not.
            if configuration.placement?.isWorn == true, previous?.isWorn != true {
                placementTransition(of: identity, toWorn: true)
            }
            let reason: RouteChangeReason = configuration.placement == nil && configuration.hasSources ? .sourceChanged : .placementChanged
            return decide(trigger, reason: reason, at: now)

        case .update(let identity, let update, let reporter):
            if let error = accessories.validateUpdate(identity, reporter: reporter, update) {
                return decide(trigger, reason: nil, at: now, error: error)
            }
            let (onDelay, offGrace) = (config.onDelay, config.offGrace)
            let step = accessories.modify(identity) { entry -> PlacementStep in
                Self.apply(update.primarySource, to: &entry.registration.configuration.primarySource)
                Self.apply(update.secondarySource, to: &entry.registration.configuration.secondarySource)
                guard case .set(let placement) = update.placement else { return .none }
                entry.registration.configuration.placement = placement
                return entry.timing.report(placement, at: now, onDelay: onDelay, offGrace: offGrace)
            } ?? .none
            if case .transition(let toWorn) = step { placementTransition(of: identity, toWorn: toWorn) }
            let reason: RouteChangeReason = step == .none && update.touchesSources ? .sourceChanged : .placementChanged
            return decide(trigger, reason: reason, at: now)

        case .unregister(let identity, let reporter):
            guard accessories[identity] != nil else {
                return decide(trigger, reason: nil, at: now, error: accessories.missing(identity))
            }
            if let error = accessories.validateOwner(identity, reporter: reporter, verb: "unregister") {
                return decide(trigger, reason: nil, at: now, error: error)
            }
            accessories.end(identity, because: "unregistered at \(now) ms")
            restoreTargets[identity] = nil
            return decide(trigger, reason: .placementChanged, at: now)
        }
    }

    /// A registration states where the accessory already is: no delay. Re-registering keeps the
    /// put-on time of an accessory that stays worn.
    static func timingAtRegistration(_ placement: Placement?, previous: PlacementTiming?, at now: Milliseconds) -> PlacementTiming {
        guard let placement else { return PlacementTiming() }
        guard placement.isWorn else { return PlacementTiming(effective: placement) }
        if let previous, previous.isWorn, let since = previous.wornSince {
            return PlacementTiming(effective: placement, wornSince: since)
        }
        return PlacementTiming(effective: placement, wornSince: now)
    }

    private static func apply(_ change: FieldChange<BluetoothAddress>, to field: inout BluetoothAddress?) {
        switch change {
        case .keep: break
        case .set(let value): field = value
        case .clear: field = nil
        }
    }
}
