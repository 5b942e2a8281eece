import AudioGraph
import EarshotDaemon
import Foundation
import RoutingPolicy

/// One connection to the daemon, as `earshot report` uses it; ControlClient in the CLI, a
/// stand-in in tests.
protocol ReportLink: AnyObject {
    func register(_ request: ControlWire.RegisterRequest) throws(ControlClientError) -> Result<Void, AccessoryError>
    func update(_ request: ControlWire.UpdateRequest) throws(ControlClientError) -> Result<Void, AccessoryError>
    /// One accessory's registration (`current`): its configuration and, from a daemon that
    /// says, its reporter.
    func current(_ accessory: String) throws(ControlClientError) -> Result<ControlWire.AccessoryResult, AccessoryError>
    /// A descriptor that becomes readable when the daemon closes the connection; nil if none.
    var descriptor: Int32? { get }
    /// The descriptor became readable while no request was out: false once the daemon is gone.
    func stillOpen() -> Bool
}

extension ControlClient: ReportLink {
    var descriptor: Int32? { socketDescriptor }

    func register(_ request: ControlWire.RegisterRequest) throws(ControlClientError) -> Result<Void, AccessoryError> {
        try self.request(.register, request, reply: ControlWire.AccessoryResult.self).map { _ in }
    }

    func update(_ request: ControlWire.UpdateRequest) throws(ControlClientError) -> Result<Void, AccessoryError> {
        try self.request(.update, request, reply: ControlWire.AccessoryResult.self).map { _ in }
    }

    func current(_ accessory: String) throws(ControlClientError) -> Result<ControlWire.AccessoryResult, AccessoryError> {
        try request(.current, ControlWire.AccessoryField(accessory: accessory), reply: ControlWire.AccessoryResult.self)
    }
}

/// The logic of `earshot report`: placement lines in, updates out over one connection, kept
/// alive across daemon restarts. It never blocks on its own; the command waits on stdin and on
/// `link?.descriptor`, and calls `flush()` again after `flush()` asks for a retry.
final class PlacementReporter {
    /// What a line of input says.
    enum Line: Equatable {
        case ignored
        case placement(Placement)
        case invalid(String)
    }

    /// What the caller should do after `flush()`.
    enum Progress: Equatable {
        /// Nothing left to do until the next line (or the connection closing).
        case idle
        /// The daemon is not reachable: call `flush()` again after this long.
        case retry(after: Duration)
        /// Stop with this exit code (the reason went to `diagnose`).
        case stop(exitCode: Int32)
    }

    struct Options {
        var accessory: String
        var reporter: String
        var capabilities: [String]
        /// How long a placement may wait for an unreachable daemon before the reporter gives up.
        var timeout: Duration
    }

    let options: Options
    private let connect: () throws(ControlClientError) -> any ReportLink
    private let diagnose: (String) -> Void
    private let now: () -> ContinuousClock.Instant

    private(set) var link: (any ReportLink)?
    /// Registered on the current connection (a new connection registers again).
    private(set) var registered = false
    /// Sent (by register or update) and accepted by the daemon.
    private(set) var delivered: Placement?
    /// The newest placement not yet accepted, and the line it came from.
    private(set) var pending: (placement: Placement, line: Int)?
    private(set) var registrations = 0
    private var failedAttempts = 0
    private var unreachableSince: ContinuousClock.Instant?
    private var toldUnreachable = false

    static let firstRetry: Duration = .milliseconds(50)
    static let longestRetry: Duration = .seconds(2)

    init(
        options: Options, connect: @escaping () throws(ControlClientError) -> any ReportLink,
        diagnose: @escaping (String) -> Void, now: @escaping () -> ContinuousClock.Instant = { .now }
    ) {
        self.options = options
        self.connect = connect
        self.diagnose = diagnose
        self.now = now
    }

    /// Blank lines and `#` comments are ignored; anything else must be a placement.
    static func parse(_ text: some StringProtocol) -> Line {
        var text = Substring(text)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        let word = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if word.isEmpty { return .ignored }
        if let placement = Placement(rawValue: word) { return .placement(placement) }
        return .invalid("\"\(word)\" is not a placement: use one of \(Placement.allCases.map(\.rawValue).joined(separator: ", "))")
    }

    /// Takes line `number` of the input; an invalid line is reported and skipped.
    func receive(_ text: some StringProtocol, number: Int) {
        switch Self.parse(text) {
        case .ignored: break
        case .invalid(let why): diagnose("line \(number): \(why)")
        case .placement(let placement): pending = (placement, number)
        }
    }

    /// True while something is owed to the daemon: a registration or a placement.
    var hasWork: Bool { !registered || pending != nil }

    /// The connection's descriptor was readable while idle: if the daemon went away, the next
    /// `flush()` reconnects and registers again.
    func connectionReadable() {
        guard let link, !link.stillOpen() else { return }
        diagnose("the daemon closed the connection; reconnecting")
        dropLink()
    }

    /// Connects, registers and sends the pending placement, as far as the daemon lets it.
    func flush(inputEnded: Bool = false) -> Progress {
        // invalidated/unknown once sends the registration again; twice in a row is a refusal.
        for _ in 0..<2 {
            guard let link = link ?? openLink() else { return unreachable(inputEnded: inputEnded) }
            do {
                if !registered {
                    if let stop = try register(over: link) { return stop }
                    registered = true
                }
                guard let (placement, line) = pending else { return .idle }
                switch try link.update(ControlWire.UpdateRequest(accessory: options.accessory, placement: placement.rawValue)) {
                case .success:
                    delivered = placement
                    pending = nil
                    return .idle
                case .failure(let error) where error.code == .invalidated || error.code == .unknown:
                    diagnose("line \(line): the daemon no longer has \(options.accessory) (\(error.code.rawValue)); registering again")
                    registered = false
                case .failure(let error):
                    diagnose("line \(line): refused: \(error.code.rawValue): \(error.message)")
                    pending = nil
                    return .idle
                }
            } catch .protocolViolation(let path, let reason) {
                diagnose(ControlClientError.protocolViolation(path: path, reason: reason).description)
                return .stop(exitCode: ControlActions.unreachable)
            } catch {
                diagnose("\(error); reconnecting")
                dropLink()
            }
        }
        if link == nil { return unreachable(inputEnded: inputEnded) }
        // Registered, then told again that the registration is gone: not worth a tight loop.
        if let (placement, line) = pending {
            diagnose("line \(line): \(options.accessory) was refused as \(placement.rawValue) right after registering again; dropped")
            pending = nil
        }
        return .retry(after: Self.longestRetry)
    }

    private func openLink() -> (any ReportLink)? {
        do {
            let opened = try connect()
            if toldUnreachable { diagnose("the daemon is reachable again") }
            link = opened
            registered = false
            failedAttempts = 0
            unreachableSince = nil
            toldUnreachable = false
            return opened
        } catch {
            if !toldUnreachable {
                diagnose("\(error); retrying")
                toldUnreachable = true
            }
            return nil
        }
    }

    private func dropLink() {
        link = nil
        registered = false
    }

    private func unreachable(inputEnded: Bool) -> Progress {
        let start = unreachableSince ?? now()
        unreachableSince = start
        failedAttempts += 1
        // A placement (or, at the end of input, the registration) is owed: wait for it only so long.
        if pending != nil || inputEnded, now() - start >= options.timeout {
            diagnose("gave up: the daemon stayed unreachable for \(options.timeout)")
            return .stop(exitCode: ControlActions.unreachable)
        }
        let delay = Self.firstRetry * (1 << min(failedAttempts - 1, 10))
        return .retry(after: min(delay, Self.longestRetry))
    }

    /// Registers with the newest placement known (pending, else the last delivered). With none
    /// known and a registration of this reporter with these capabilities already there (say,
    /// restored by the daemon), it is left as it is instead of clearing its placement.
    private func register(over link: any ReportLink) throws(ControlClientError) -> Progress? {
        let placement = pending?.placement ?? delivered
        if placement == nil, try isRegisteredAlready(over: link) { return nil }
        let request = ControlActions.registerRequest(
            accessory: options.accessory, capabilities: options.capabilities, placement: placement?.rawValue,
            primarySource: nil, secondarySource: nil, reporter: options.reporter)
        switch try link.register(request) {
        case .success:
            registrations += 1
            if registrations > 1 { diagnose("registered \(options.accessory) again" + (placement.map { " (\($0.rawValue))" } ?? "")) }
            if let placement {
                delivered = placement
                if pending?.placement == placement { pending = nil }
            }
            return nil
        case .failure(let error):
            diagnose("cannot register \(options.accessory): refused: \(error.code.rawValue): \(error.message)")
            return .stop(exitCode: ControlActions.refused)
        }
    }

    /// Asks for this one accessory (`current`), not the whole list: the answer's size does not
    /// depend on how many accessories are registered.
    private func isRegisteredAlready(over link: any ReportLink) throws(ControlClientError) -> Bool {
        guard case .success(let result) = try link.current(options.accessory), let accessory = result.accessory else { return false }
        return result.reporter == options.reporter && Set(accessory.configuration.capabilities) == Set(options.capabilities)
    }
}
