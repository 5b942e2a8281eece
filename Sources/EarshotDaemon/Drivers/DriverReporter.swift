import AccessoryDrivers
import ControlProtocol
import Logging
import RoutingPolicy

/// A driver's side of the accessory API, in process: `earshot report`'s own logic
/// (`AccessoryReportSession`: register with the newest placement, register again after
/// invalidated/unknown, unregister when the device goes) driven over `DaemonControl`, so the
/// policy cannot tell a driver from a user's reporter. One rule is the driver's own: a
/// registration by another reporter (the user's) wins, and the driver then leaves the
/// accessory alone, saying so once, until that registration ends.
struct DriverReporter {
    private var session: AccessoryReportSession
    private let logger: Logger
    /// Another reporter has the accessory.
    private(set) var yieldedTo: String?
    /// The host the device says it plays for (AAP), sent as the primary source.
    private var source: BluetoothAddress?
    private var sentSource: BluetoothAddress?

    init(address: BluetoothAddress, family: AccessoryFamily.Kind, logger: Logger) {
        session = AccessoryReportSession(accessory: .address(address), reporter: family.reporter, capabilities: [.audioSwitching, .placement])
        self.logger = logger
    }

    var identity: AccessoryIdentity { session.accessory }
    var reporter: String { session.reporter }

    /// A placement the device reported.
    mutating func report(_ placement: Placement, to control: any DaemonControl) async {
        session.owe(placement)
        await deliver(to: control)
    }

    /// The host the device plays for now (nil: none), as the accessory's primary source.
    mutating func reportSource(_ address: BluetoothAddress?, to control: any DaemonControl) async {
        source = address
        await sendSource(to: control)
    }

    /// The device disconnected: its registration ends (a user's, if it took over, stays).
    mutating func gone(to control: any DaemonControl) async {
        session.disconnectAccessory()
        sentSource = nil
        // Another reporter's registration is not the driver's to end.
        if yieldedTo != nil { return }
        for note in await session.deliver(over: control) { logger.info("\(reporter): \(identity): \(note)") }
    }

    private mutating func deliver(to control: any DaemonControl) async {
        let notes = await session.deliver(over: control)
        var refused = false
        for note in notes {
            switch note {
            case .registrationRefused: refused = true
            case .updateRefused(let error, _) where error.code == .invalidRequest: refused = true
            case .registeredAgain: break  // routine after the user's registration ended
            default: logger.info("\(reporter): \(identity): \(note)")
            }
        }
        if refused {
            let owner = await control.reporter(of: identity)
            if let owner, owner != reporter {
                if yieldedTo != owner { logger.info("\(reporter): \(identity) is registered by \(owner): your own reporter wins, the driver leaves it alone") }
                yieldedTo = owner
                return
            }
            for note in notes { logger.warning("\(reporter): \(identity): \(note)") }
        } else if session.registered {
            if yieldedTo != nil { logger.info("\(reporter): \(identity) is the driver's again (the other reporter's registration ended)") }
            yieldedTo = nil
        }
        await sendSource(to: control)
    }

    private mutating func sendSource(to control: any DaemonControl) async {
        guard session.registered, yieldedTo == nil, source != sentSource else { return }
        let update = AccessoryUpdate(primarySource: source.map { .set($0) } ?? .clear)
        switch await control.perform(.update(identity, update, reporter: reporter)) {
        case .success: sentSource = source
        case .failure(let error): logger.info("\(reporter): \(identity): the audio source not sent: \(error.code.rawValue): \(error.message)")
        }
    }
}
