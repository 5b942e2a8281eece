import ControlProtocol
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
