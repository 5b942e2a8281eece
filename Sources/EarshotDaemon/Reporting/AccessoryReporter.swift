import RoutingPolicy

extension AccessoryReportSession {
    /// Sends `action` over `control` and returns the reply for `receive(_:to:)`. In process
    /// there is no connection to lose.
    public func reply(to action: Action, from control: some DaemonControl) async -> Reply {
        switch action {
        case .checkExisting:
            switch await control.current(accessory) {
            case .success(let configuration):
                return .existing(reporter: await control.reporter(of: accessory), capabilities: configuration.capabilities)
            case .failure(let error):
                return .refused(error)
            }
        case .register, .update, .unregister:
            guard let request = request(for: action) else { return .connectionLost }
            switch await control.perform(request) {
            case .success: return .success
            case .failure(let error): return .refused(error)
            }
        }
    }

    /// One round over `control`: sends what `nextAction()` asks until nothing is owed or the
    /// round is over (the invalidated/unknown rule), and returns what to log.
    public mutating func deliver(over control: some DaemonControl) async -> [Note] {
        beginRound()
        var notes: [Note] = []
        while let action = nextAction() {
            notes += receive(await reply(to: action, from: control), to: action)
        }
        return notes
    }
}

/// A built-in driver's reporter for one accessory: an `AccessoryReportSession` driven over the
/// daemon's `DaemonControl` in process. Placements and the disconnect may arrive while a round
/// is under way (the actor is reentrant at each request): the running round sends them, so
/// requests for one accessory never overlap.
public actor AccessoryReporter {
    public private(set) var session: AccessoryReportSession
    private let control: any DaemonControl
    private var delivering = false

    public init(session: AccessoryReportSession, control: any DaemonControl) {
        self.session = session
        self.control = control
    }

    /// The headset reported `placement`: owe it and deliver.
    public func report(_ placement: Placement) async -> [AccessoryReportSession.Note] {
        session.owe(placement)
        return await deliver()
    }

    /// The headset disconnected: withdraw its registration.
    public func accessoryDisconnected() async -> [AccessoryReportSession.Note] {
        session.disconnectAccessory()
        return await deliver()
    }

    /// Runs a round unless one is under way (that one picks up what is owed now); returns
    /// this round's notes (empty when it left the work to the running round).
    public func deliver() async -> [AccessoryReportSession.Note] {
        guard !delivering else { return [] }
        delivering = true
        defer { delivering = false }
        session.beginRound()
        var notes: [AccessoryReportSession.Note] = []
        while let action = session.nextAction() {
            let asking = session
            let reply = await asking.reply(to: action, from: control)
            notes += session.receive(reply, to: action)
        }
        return notes
    }
}
