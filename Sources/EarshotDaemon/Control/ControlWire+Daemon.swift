import AudioGraph
import ControlProtocol
import FoundationEssentials
import RoutingPolicy

// The control protocol's messages made from the daemon's own values (ControlProtocol knows
// nothing of the daemon: the client links only that module).

extension ControlWire.ListedAccessory {
    public init(_ status: AccessoryStatus) {
        self.init(
            accessory: ControlWire.Accessory(status.registration.identity, status.registration.configuration), reporter: status.registration.reporter,
            stale: status.isStale, sinks: status.sinks, driver: status.driver.map(ControlWire.DriverEntry.init))
    }
}

extension ControlWire.Status {
    public init(_ status: DaemonStatus) {
        self.init(
            mode: status.mode.rawValue, remote: status.remote, connected: status.connected, sessionManager: status.sessionManager,
            sessionManagerVersion: status.sessionManagerVersion, decision: status.decision.map { .record(DecisionRecord($0)) },
            subscribers: status.subscribers, hostAddresses: status.hostAddresses.map(ControlWire.HostAddressEntry.init),
            state: status.stateProblem.map { "not saved (\($0))" } ?? "ok", drivers: status.drivers.map(ControlWire.DriverEntry.init),
            diagnostics: ControlWire.Diagnostics(switchSpans: status.switchSpans.map { ControlWire.SwitchSpanEntry(read: $0.read, sent: $0.sent, echo: $0.echo) }))
    }
}

extension ControlWire.DriverEntry {
    public init(_ entry: DriverBoard.Entry) {
        var levels: [String: Int] = [:]
        if let battery = entry.battery {
            for (part, level) in [("left", battery.left), ("right", battery.right), ("case", battery.chargingCase), ("headset", battery.headset)] {
                if let level { levels[part] = level.percent }
            }
        }
        self.init(
            address: entry.address.description, family: entry.family, name: entry.name, connection: entry.connection.rawValue,
            problem: entry.problem, battery: levels.isEmpty ? nil : levels, lastPacket: entry.lastPacket.map { $0.formatted(.iso8601) },
            packets: entry.packets, skipped: entry.skipped)
    }
}

extension ControlWire.Event {
    public init(_ event: DaemonEvent) {
        switch event {
        case .routeChanged(let change): self = .routeChange(ControlWire.RouteChangeEvent(change))
        case .accessoryChanged(let change): self = .accessory(ControlWire.AccessoryEvent(change))
        case .playbackChanged(let change): self = .playback(ControlWire.PlaybackEvent(change))
        case .hostAddressesChanged(let change): self = .hostAddresses(ControlWire.HostAddressesEvent(change))
        }
    }
}

extension ControlWire.RouteChangeEvent {
    public init(_ change: RouteChange) {
        self.init(
            at: change.at, reason: change.reason.rawValue, previous: change.previous, current: change.current, accessory: change.accessory,
            summary: change.summary, previousPort: change.previousPort, port: change.port,
            portEvent: change.portEvent.map { PortEventField(kind: $0.kind.rawValue, sink: $0.sink, port: $0.port) },
            direction: change.direction.rawValue)
    }
}

extension ControlWire.AccessoryEvent {
    public init(_ change: AccessoryChange) {
        self.init(
            at: change.at, change: change.kind.rawValue, accessory: change.accessory, reporter: change.reporter,
            configuration: change.configuration.map(ControlWire.Configuration.init))
    }
}

extension ControlWire.PlaybackEvent {
    public init(_ change: PlaybackChange) {
        self.init(
            at: change.at, action: change.action.rawValue, reason: change.reason.rawValue, players: change.players, sink: change.sink,
            accessory: change.accessory)
    }
}

extension ControlWire.HostAddressesEvent {
    public init(_ change: HostAddressesChange) {
        self.init(
            at: change.at, addresses: change.addresses.map(ControlWire.HostAddressEntry.init), added: change.added.map(\.description),
            removed: change.removed.map(\.description))
    }
}

extension ControlWire {
    public static func event(_ event: DaemonEvent) -> Event {
        Event(event)
    }
}
