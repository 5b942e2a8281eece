import Logging
import RoutingPolicy

/// A driver's side of the accessory API, in process: it registers the accessory it drives
/// under its family's reporter name with audio-switching and placement, sends each placement,
/// and unregisters when the device goes. It goes through `DaemonControl` like any reporter, so
/// the policy cannot tell a driver from a user's reporter, except for one rule: a registration
/// by another reporter (the user's own) wins, and the driver then leaves the accessory alone
/// until that registration ends.
struct DriverReporter {
    let identity: AccessoryIdentity
    let reporter: String
    private let logger: Logger
    private(set) var registered = false
    /// Another reporter has the accessory: say so once, then keep quiet.
    private(set) var yieldedTo: String?
    private var placement: Placement?
    private var source: BluetoothAddress?

    init(address: BluetoothAddress, family: DriverFamily, logger: Logger) {
        identity = .address(address)
        reporter = family.reporter
        self.logger = logger
    }

    /// A placement the device reported.
    mutating func report(_ placement: Placement, to control: any DaemonControl) async {
        self.placement = placement
        await deliver(AccessoryUpdate(placement: .set(placement)), to: control)
    }

    /// The host the device plays for now (AAP tells it), as the accessory's primary source.
    mutating func reportSource(_ address: BluetoothAddress?, to control: any DaemonControl) async {
        guard address != source else { return }
        source = address
        guard placement != nil else { return }  // sent with the registration
        await deliver(AccessoryUpdate(primarySource: address.map { .set($0) } ?? .clear), to: control)
    }

    /// The device disconnected: its registration ends (a user's, if it took over, stays).
    mutating func gone(to control: any DaemonControl) async {
        defer {
            registered = false
            placement = nil
        }
        guard registered else { return }
        _ = await control.perform(.unregister(identity, reporter: reporter))
    }

    private mutating func deliver(_ update: AccessoryUpdate, to control: any DaemonControl) async {
        // Registering again once after invalidated/unknown; a refusal right after is final.
        for _ in 0..<2 {
            if !registered {
                guard await register(with: control) else { return }
                return
            }
            switch await control.perform(.update(identity, update, reporter: reporter)) {
            case .success:
                yieldedTo = nil
                return
            case .failure(let error) where error.code == .invalidated || error.code == .unknown:
                registered = false
            case .failure(let error):
                await yieldIfTaken(error, control: control)
                return
            }
        }
    }

    /// Registers with what is known now; false when refused.
    private mutating func register(with control: any DaemonControl) async -> Bool {
        let configuration = AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: placement, primarySource: source)
        switch await control.perform(.register(identity, reporter: reporter, configuration)) {
        case .success:
            registered = true
            if yieldedTo != nil { logger.info("\(reporter): \(identity) is the driver's again (the other reporter's registration ended)") }
            yieldedTo = nil
            return true
        case .failure(let error):
            await yieldIfTaken(error, control: control)
            return false
        }
    }

    private mutating func yieldIfTaken(_ error: AccessoryError, control: any DaemonControl) async {
        registered = false
        let owner = await control.reporter(of: identity)
        if let owner, owner != reporter {
            if yieldedTo != owner { logger.info("\(reporter): \(identity) is registered by \(owner): your own reporter wins, the driver leaves it alone") }
            yieldedTo = owner
        } else {
            logger.warning("\(reporter): \(identity) refused: \(error.code.rawValue): \(error.message)")
        }
    }
}
