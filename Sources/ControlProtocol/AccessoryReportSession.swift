import RoutingPolicy

/// What a reporter owes the daemon for one accessory, and what to send next: the decisions of
/// `earshot report`, shared with the built-in drivers. Pure: its owner sends each `Action` over
/// its own link (the control socket, or `DaemonControl` in process) and hands back the reply.
///
/// The rules:
/// - register with the newest placement known (owed, else the last delivered); with none
///   known, first ask (`checkExisting`) and leave a registration of this reporter with these
///   capabilities alone (say, restored by the daemon) instead of clearing its placement;
/// - a registration is per connection: after the connection is lost, register again;
/// - an update answered `invalidated` or `unknown` registers again and resends;
/// - within one round (`beginRound()`) there are two attempts; an attempt ends when an update
///   is answered `invalidated`/`unknown` or the connection is lost. A placement refused that
///   way on the second attempt (right after registering again) is dropped, so a daemon that
///   keeps forgetting the accessory costs no tight loop;
/// - any other refusal of an update drops that placement; a refused registration stops the
///   session until a new placement is owed (or the connection is renewed).
public struct AccessoryReportSession: Sendable, Hashable {
    public let accessory: AccessoryIdentity
    public let reporter: String
    public let capabilities: AccessoryCapabilities

    /// Registered on the current connection.
    public private(set) var registered = false
    /// The newest placement not yet accepted by the daemon.
    public private(set) var owed: Placement?
    /// The last placement the daemon accepted (by register or update).
    public private(set) var delivered: Placement?
    /// Successful registrations so far (a restored registration left alone is not one).
    public private(set) var registrations = 0
    /// A registration was refused: nothing is sent until `owe` or `connectionLost`.
    public private(set) var registrationRefused = false
    /// An unregister is owed (the accessory disconnected).
    public private(set) var unregisterOwed = false

    private var checkedExisting = false
    /// The accessory disconnected: nothing but the unregister is owed until the next `owe`.
    private var dormant = false
    private var attempts = 0

    /// Attempts per round.
    public static let attemptsPerRound = 2

    public init(accessory: AccessoryIdentity, reporter: String, capabilities: AccessoryCapabilities) {
        self.accessory = accessory
        self.reporter = reporter
        self.capabilities = capabilities
    }

    /// What to send next.
    public enum Action: Sendable, Hashable {
        /// Ask for the accessory's registration (`current`) and its reporter.
        case checkExisting
        /// Register with this placement (nil: none known).
        case register(Placement?)
        case update(Placement)
        /// The accessory is gone: withdraw its registration.
        case unregister
    }

    /// The daemon's answer to the last action, or what happened to the link.
    public enum Reply: Sendable, Hashable {
        /// Accepted.
        case success
        /// `checkExisting`'s answer: the registration's reporter and capabilities (nil when the
        /// daemon has none for the accessory, or did not say).
        case existing(reporter: String?, capabilities: AccessoryCapabilities?)
        case refused(AccessoryError)
        /// The connection broke before or while the action was answered.
        case connectionLost
    }

    /// What happened, for the log. `description` is a line; owners with more context (the CLI's
    /// line numbers) word their own.
    public enum Note: Sendable, Hashable, CustomStringConvertible {
        /// Registered again after the first registration (a reconnect, an invalidation).
        case registeredAgain(Placement?)
        /// An update was answered invalidated/unknown: registering again.
        case registrationGone(AccessoryError.Code, Placement)
        /// An update was refused for another reason: the placement is dropped.
        case updateRefused(AccessoryError, Placement)
        /// The placement was refused again right after registering again: dropped.
        case droppedAfterRegisteringAgain(Placement)
        /// The registration was refused.
        case registrationRefused(AccessoryError)
        /// The unregister was refused (nothing more is tried: the accessory is gone anyway).
        case unregisterRefused(AccessoryError)

        public var description: String {
            switch self {
            case .registeredAgain(let placement):
                "registered again" + (placement.map { " (\($0.rawValue))" } ?? "")
            case .registrationGone(let code, let placement):
                "the daemon no longer has the accessory (\(code.rawValue)) while sending \(placement.rawValue); registering again"
            case .updateRefused(let error, let placement):
                "\(placement.rawValue) refused: \(error.code.rawValue): \(error.message)"
            case .droppedAfterRegisteringAgain(let placement):
                "refused as \(placement.rawValue) right after registering again; dropped"
            case .registrationRefused(let error):
                "cannot register: refused: \(error.code.rawValue): \(error.message)"
            case .unregisterRefused(let error):
                "cannot unregister: refused: \(error.code.rawValue): \(error.message)"
            }
        }
    }

    // MARK: - Input

    /// A new placement to deliver (replaces one still owed).
    public mutating func owe(_ placement: Placement) {
        owed = placement
        registrationRefused = false
        unregisterOwed = false
        dormant = false
    }

    /// The accessory disconnected: withdraw the registration (if one was made), forget the
    /// placements and owe nothing more until the next `owe`.
    public mutating func disconnectAccessory() {
        // A placement still owed may be on its way in a registration now.
        unregisterOwed = registered || registrations > 0 || owed != nil
        owed = nil
        delivered = nil
        registrationRefused = false
        dormant = true
    }

    /// The connection to the daemon is gone (outside a request too): the next one registers
    /// again. Counts as an attempt of the current round.
    public mutating func connectionLost() {
        registered = false
        checkedExisting = false
        attempts += 1
    }

    /// Starts a round of at most `attemptsPerRound` attempts (the CLI's flush, one `deliver`).
    public mutating func beginRound() {
        attempts = 0
    }

    // MARK: - Output

    /// True while something is owed: a registration, a placement or an unregister.
    public var hasWork: Bool {
        if unregisterOwed { return true }
        if registrationRefused || dormant { return false }
        return !registered || owed != nil
    }

    /// True once this round's attempts are used up (see the rules above).
    public var roundExhausted: Bool { attempts >= Self.attemptsPerRound }

    /// The next request to send; nil when nothing is owed or this round is over.
    public func nextAction() -> Action? {
        guard !roundExhausted else { return nil }
        if unregisterOwed { return .unregister }
        guard !registrationRefused, !dormant else { return nil }
        if !registered {
            let placement = owed ?? delivered
            if placement == nil, !checkedExisting { return .checkExisting }
            return .register(placement)
        }
        return owed.map(Action.update)
    }

    /// Takes the reply to `action` (the one `nextAction()` returned) and says what to log.
    public mutating func receive(_ reply: Reply, to action: Action) -> [Note] {
        if reply == .connectionLost {
            connectionLost()
            return []
        }
        switch action {
        case .checkExisting:
            checkedExisting = true
            if case .existing(let reporter, let capabilities) = reply, reporter == self.reporter, capabilities == self.capabilities {
                registered = true
            }
            return []
        case .register(let placement):
            switch reply {
            case .refused(let error):
                registrationRefused = true
                owed = nil
                return [.registrationRefused(error)]
            default:
                registered = true
                registrations += 1
                if let placement {
                    delivered = placement
                    if owed == placement { owed = nil }
                }
                return registrations > 1 ? [.registeredAgain(placement)] : []
            }
        case .update(let placement):
            switch reply {
            case .refused(let error) where error.code == .invalidated || error.code == .unknown:
                registered = false
                checkedExisting = false
                attempts += 1
                if roundExhausted, owed != nil {
                    owed = nil
                    return [.registrationGone(error.code, placement), .droppedAfterRegisteringAgain(placement)]
                }
                return [.registrationGone(error.code, placement)]
            case .refused(let error):
                if owed == placement { owed = nil }
                return [.updateRefused(error, placement)]
            default:
                delivered = placement
                if owed == placement { owed = nil }
                return []
            }
        case .unregister:
            unregisterOwed = false
            registered = false
            checkedExisting = false
            registrations = 0
            if case .refused(let error) = reply, error.code != .unknown, error.code != .invalidated {
                return [.unregisterRefused(error)]
            }
            return []
        }
    }

    // MARK: - Requests

    /// `action` as a `DaemonControl` request (nil for `checkExisting`, which is `current` and
    /// `reporter(of:)`).
    public func request(for action: Action) -> AccessoryRequest? {
        switch action {
        case .checkExisting: nil
        case .register(let placement):
            .register(accessory, reporter: reporter, AccessoryConfiguration(capabilities: capabilities, placement: placement))
        case .update(let placement):
            .update(accessory, AccessoryUpdate(placement: .set(placement)), reporter: reporter)
        case .unregister:
            .unregister(accessory, reporter: reporter)
        }
    }
}
