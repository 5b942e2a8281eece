import WireFields
import ControlProtocol
import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// One connection to the daemon, as `earshot report` uses it; ControlClient in the CLI, a
/// stand-in in tests.
protocol ReportLink: AnyObject {
    /// Registers; the success is the reply's warnings (`[]` for none).
    func register(_ request: ControlWire.RegisterRequest) throws(ControlClientError) -> Result<[String], AccessoryError>
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

    func register(_ request: ControlWire.RegisterRequest) throws(ControlClientError) -> Result<[String], AccessoryError> {
        try self.request(.register, request, reply: ControlWire.AccessoryResult.self).map { $0.warnings ?? [] }
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
    /// What is owed to the daemon and what to send next (shared with the built-in drivers).
    private var session: AccessoryReportSession
    /// The input line the owed placement came from.
    private var pendingLine = 0
    /// Registered on the current connection (a new connection registers again).
    var registered: Bool { session.registered }
    /// Sent (by register or update) and accepted by the daemon.
    var delivered: Placement? { session.delivered }
    /// The newest placement not yet accepted, and the line it came from.
    var pending: (placement: Placement, line: Int)? { session.owed.map { ($0, pendingLine) } }
    var registrations: Int { session.registrations }
    /// Placement lines read, and the placements the daemon refused (each a line dropped).
    private(set) var placementLines = 0
    private(set) var refusedPlacements = 0
    /// The first refusal, as it was reported: `line 4: accessory-not-capable: …`.
    private(set) var firstRefusal: String?
    /// The register replies' warnings printed so far.
    private var toldWarnings: Set<String> = []
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
        session = AccessoryReportSession(
            accessory: AccessoryIdentity(parsing: options.accessory) ?? .nodeName(options.accessory), reporter: options.reporter,
            capabilities: AccessoryCapabilities(options.capabilities.compactMap(AccessoryCapability.init(rawValue:))))
        self.connect = connect
        self.diagnose = diagnose
        self.now = now
    }

    /// Blank lines and `#` comments are ignored; anything else must be a placement.
    static func parse(_ text: some StringProtocol) -> Line {
        var text = Substring(text)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        let word = String(text.trimmingWhitespace)
        if word.isEmpty { return .ignored }
        if let placement = Placement(rawValue: word) { return .placement(placement) }
        return .invalid("\"\(word)\" is not a placement: use one of \(Placement.allCases.map(\.rawValue).joined(separator: ", "))")
    }

    /// Takes line `number` of the input; an invalid line is reported and skipped.
    func receive(_ text: some StringProtocol, number: Int) {
        switch Self.parse(text) {
        case .ignored: break
        case .invalid(let why): diagnose("line \(number): \(why)")
        case .placement(let placement):
            placementLines += 1
            session.owe(placement)
            pendingLine = number
        }
    }

    /// True while something is owed to the daemon: a registration or a placement.
    var hasWork: Bool { session.hasWork }

    /// The connection's descriptor was readable while idle: if the daemon went away, the next
    /// `flush()` reconnects and registers again.
    func connectionReadable() {
        guard let link, !link.stillOpen() else { return }
        diagnose("the daemon closed the connection; reconnecting")
        dropLink()
    }

    /// Connects, registers and sends the pending placement, as far as the daemon lets it.
    func flush(inputEnded: Bool = false) -> Progress {
        // invalidated/unknown once sends the registration again; twice in a row is a refusal
        // (the session's round: two attempts, each ended by such a reply or a lost connection).
        session.beginRound()
        while !session.roundExhausted {
            guard let link = link ?? openLink() else { return unreachable(inputEnded: inputEnded) }
            do {
                guard let action = session.nextAction() else { return .idle }
                let notes = session.receive(try send(action, over: link), to: action)
                for note in notes {
                    if let stop = report(note) { return stop }
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
        return .retry(after: Self.longestRetry)
    }

    /// One request over the connection, its answer in the session's terms.
    private func send(_ action: AccessoryReportSession.Action, over link: any ReportLink) throws(ControlClientError) -> AccessoryReportSession.Reply {
        let result: Result<Void, AccessoryError>
        switch action {
        case .checkExisting:
            // Asks for this one accessory (`current`), not the whole list: the answer's size
            // does not depend on how many accessories are registered.
            switch try link.current(options.accessory) {
            case .success(let result):
                guard let accessory = result.accessory else { return .existing(reporter: nil, capabilities: nil) }
                let names = accessory.configuration.capabilities
                let known = names.compactMap(AccessoryCapability.init(rawValue:))
                return .existing(reporter: result.reporter, capabilities: known.count == names.count ? AccessoryCapabilities(known) : nil)
            case .failure(let error):
                return .refused(error)
            }
        case .register(let placement):
            result = try link.register(ControlActions.registerRequest(
                accessory: options.accessory, capabilities: options.capabilities, placement: placement?.rawValue,
                primarySource: nil, secondarySource: nil, reporter: options.reporter)
            ).map { warnings in
                // Each warning once, not at every registration again (a reconnect).
                for warning in warnings where toldWarnings.insert(warning).inserted { diagnose("warning: \(warning)") }
            }
        case .update(let placement):
            // Always named: the connection may not be the one that registered (a registration
            // restored by the daemon, or made by an earlier bridge, is kept, not made again).
            result = try link.update(ControlWire.UpdateRequest(accessory: options.accessory, reporter: options.reporter, placement: placement.rawValue))
        case .unregister:
            // `report` never withdraws its registration (the session asks only after
            // `disconnectAccessory`, which it does not call).
            return .success
        }
        switch result {
        case .success: return .success
        case .failure(let error): return .refused(error)
        }
    }

    /// Logs `note` in `report`'s words; a refused registration stops the reporter.
    private func report(_ note: AccessoryReportSession.Note) -> Progress? {
        switch note {
        case .registeredAgain(let placement):
            diagnose("registered \(options.accessory) again" + (placement.map { " (\($0.rawValue))" } ?? ""))
        case .registrationGone(let code, _):
            diagnose("line \(pendingLine): the daemon no longer has \(options.accessory) (\(code.rawValue)); registering again")
        case .updateRefused(let error, _):
            diagnose("line \(pendingLine): refused: \(error.code.rawValue): \(error.message)")
            refused("line \(pendingLine): \(error.code.rawValue): \(error.message)")
        case .droppedAfterRegisteringAgain(let placement):
            diagnose("line \(pendingLine): \(options.accessory) was refused as \(placement.rawValue) right after registering again; dropped")
            refused("line \(pendingLine): \(options.accessory) was refused as \(placement.rawValue) right after registering again")
        case .registrationRefused(let error):
            diagnose("cannot register \(options.accessory): refused: \(error.code.rawValue): \(error.message)")
            return .stop(exitCode: ControlActions.refused)
        case .unregisterRefused(let error):
            diagnose("cannot unregister \(options.accessory): refused: \(error.code.rawValue): \(error.message)")
        }
        return nil
    }

    private func refused(_ what: String) {
        refusedPlacements += 1
        if firstRefusal == nil { firstRefusal = what }
    }

    /// The exit code at the end of the input, everything read delivered or refused: 0 when the
    /// daemon took every placement, 1 (with the count and the first refusal) when it refused
    /// any. A placement dropped for a lost connection or superseded by a newer line is not
    /// refused.
    func finish() -> Int32 {
        guard refusedPlacements > 0, let firstRefusal else { return 0 }
        diagnose(
            "the daemon refused \(refusedPlacements) of \(placementLines) placement line\(placementLines == 1 ? "" : "s"); the first: \(firstRefusal)")
        return ControlActions.refused
    }

    private func openLink() -> (any ReportLink)? {
        do {
            let opened = try connect()
            if toldUnreachable { diagnose("the daemon is reachable again") }
            link = opened
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
        session.connectionLost()
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
}
