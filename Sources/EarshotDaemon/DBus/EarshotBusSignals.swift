import WireFields
import ControlProtocol
import SystemBridge

/// Every signal of `org.earshot.Earshot1`, in the order of the introspection XML: the event
/// each carries and which of its fields, in order. RouteChanged keeps its 0.2 arguments; the
/// ports follow in RoutePortChanged; the input has its own (§8), and so do calls' streams.
enum EarshotBusSignals {
    typealias Route = ControlWire.RouteChangeEvent

    static let routeChanged = EarshotBusSignal<Route>(
        name: "RouteChanged",
        doc: "The default output changed. reason: initial, new-device-available, old-device-unavailable, placement-changed, source-changed, user-override, config-changed, no-suitable-route. previous, current: node.names. accessory: the one whose change caused it. at: milliseconds since the Unix epoch.",
        arguments: [.field(\.reason), .field(\.previous), .field(\.current), .field(\.accessory), .field(\.summary), .field(\.at)])

    static let routePortChanged = EarshotBusSignal<Route>(
        name: "RoutePortChanged", since: "0.3",
        doc: "Sent right after a RouteChanged whose route has a port (a sink whose device publishes routes) or that a jack caused; RouteChanged keeps its arguments. current: the default's node.name; previous_port, port: the active route's description before and after; event: unplugged (the default's port went away: headphones pulled from the jack, a monitor off), plugged (a headphones or headset port came) or empty; event_sink, event_port: where. at: milliseconds since the Unix epoch.",
        arguments: [
            .field(\.reason), .field(\.current), .field(\.previousPort), .field(\.port), .field(\.portEvent, \.kind, as: "event"),
            .field(\.portEvent, \.sink, as: "event_sink"), .field(\.portEvent, \.port, as: "event_port"), .field(\.at),
        ])

    static let inputRouteChanged = EarshotBusSignal<Route>(
        name: "InputRouteChanged", since: "0.4",
        doc: "The default input (the microphone) changed (docs/policy.md §8); RouteChanged stays the output's. reason: as RouteChanged's. previous, current: the sources' node.names. accessory: the one whose change caused it. summary: sources eligible. previous_port, port: the source's active route before and after. event: unplugged, plugged or empty. at: milliseconds since the Unix epoch.",
        arguments: [
            .field(\.reason), .field(\.previous), .field(\.current), .field(\.accessory), .field(\.summary), .field(\.previousPort),
            .field(\.port), .field(\.portEvent, \.kind, as: "event"), .field(\.at),
        ])

    static let accessoryChanged = EarshotBusSignal<ControlWire.AccessoryEvent>(
        name: "AccessoryChanged",
        doc: "A registration changed. change: registered, updated, unregistered, invalidated. configuration: capabilities as, placement s, primary-source s, secondary-source s afterwards; empty once it ended. at: milliseconds since the Unix epoch.",
        arguments: [.field(\.change), .field(\.accessory), .field(\.reporter), .field(\.configuration), .field(\.at)])

    static let playbackChanged = EarshotBusSignal<ControlWire.PlaybackEvent>(
        name: "PlaybackChanged",
        doc: "Earshot paused or resumed MPRIS players, or held silent (muted) or gave back streams no pause stopped (PlaybackDetail says which). action: paused, resumed, held, released. reason: accessory-removed, sink-removed, other-host, accessory-returned, port-unplugged, port-plugged, stopped, restarted. players: MPRIS bus names (empty for held and released). sink: the node.name they played on. at: milliseconds since the Unix epoch.",
        arguments: [.field(\.action), .field(\.reason), .field(\.players), .field(\.sink), .field(\.accessory), .field(\.at)])

    /// Sent right after each PlaybackChanged (which keeps its arguments): how each player was
    /// matched, and the streams held or released.
    static let playbackDetail = EarshotBusSignal<ControlWire.PlaybackEvent>(
        name: "PlaybackDetail", since: "0.4",
        doc: "Sent right after each PlaybackChanged, which keeps its arguments (docs/policy.md §7). action, reason, players: as PlaybackChanged's. matches: how each player was found to play there, by bus name: pid (the stream's client is its process), ancestor (a child of it: Chromium, Electron), flatpak (the same Flatpak app and instance). streams, applications: the node ids and application.names of the streams held (muted) or released (unmuted). sink, accessory, at: as PlaybackChanged's.",
        arguments: [
            .field(\.action), .field(\.reason), .field(\.players), .field(\.matches),
            .field(\.streams, signature: "at") { .array(element: "t", $0.streams.map { .uint64($0.stream) }) },
            EarshotBusArgument(
                name: "applications", signature: "as", keys: [], doc: "the streams' `application.name`s, in the order of `streams` (empty: not known)",
                custom: { .strings($0.streams.map { $0.application ?? "" }) }),
            .field(\.sink), .field(\.accessory), .field(\.at),
        ])

    /// Each address with its origins as Status's host-addresses spells it.
    static let hostAddressesChanged = EarshotBusSignal<ControlWire.HostAddressesEvent>(
        name: "HostAddressesChanged",
        doc: "This host's Bluetooth addresses in use changed (BlueZ's adapters, or host-addresses in a reloaded config), or where one came from did. addresses: every one now, each with its origins as Status's host-addresses spells it (11:22:33:44:55:66 (config, bluez hci0)). added, removed: the addresses in use now that were not before, and those no longer in use (both empty when only origins changed). at: milliseconds since the Unix epoch.",
        arguments: [
            .field(\.addresses, signature: "as") { .strings($0.addresses.map(\.description)) }, .field(\.added), .field(\.removed), .field(\.at),
        ])

    /// A call's stream moved (§8): the socket's `stream-moved`, with none as `""` (0 for an
    /// unknown serial).
    static let streamMoved = EarshotBusSignal<ControlWire.StreamMovedEvent>(
        name: "StreamMoved", since: "0.4",
        doc: "Earshot moved a capture stream ([input] bluetooth-microphone = calls, docs/policy.md §8). kind: call (pointed at the worn headset's microphone, kept out of the default source so music keeps A2DP), back (back to the default source), stale-target (a target restored from an earlier call, removed). stream, serial: its node id and object.serial (0: unknown). application, role: its application.name and media.role. from, to: the sources' node.names; empty: the default source. at: milliseconds since the Unix epoch.",
        arguments: EarshotBusArgument.fields(inline: \.move) + [.field(\.at)])

    /// The signals' elements of the XML, in its order.
    static var xml: [(name: String, xml: String)] {
        [
            (routeChanged.name, routeChanged.xml), (routePortChanged.name, routePortChanged.xml), (inputRouteChanged.name, inputRouteChanged.xml),
            (accessoryChanged.name, accessoryChanged.xml), (playbackChanged.name, playbackChanged.xml), (playbackDetail.name, playbackDetail.xml),
            (hostAddressesChanged.name, hostAddressesChanged.xml), (streamMoved.name, streamMoved.xml),
        ]
    }

    /// docs/dbus.md's table of signals, from the declarations.
    static var markdownTable: String {
        let rows = [
            routeChanged.summaryRow, routePortChanged.summaryRow, inputRouteChanged.summaryRow, accessoryChanged.summaryRow,
            playbackChanged.summaryRow, playbackDetail.summaryRow, hostAddressesChanged.summaryRow, streamMoved.summaryRow,
        ]
        return (["| signal | arguments |", "|---|---|"] + rows).joined(separator: "\n") + "\n"
    }

    /// What an event sends: its signal, then RoutePortChanged after an output's RouteChanged
    /// that has ports to name.
    static func signals(for event: ControlWire.Event) -> [(member: String, arguments: [DBusValue])] {
        switch event {
        case .routeChange(let change) where change.direction == .input:
            return [(inputRouteChanged.name, inputRouteChanged.arguments(for: change))]
        case .routeChange(let change):
            var signals = [(routeChanged.name, routeChanged.arguments(for: change))]
            if change.port != nil || change.previousPort != nil || change.portEvent != nil {
                signals.append((routePortChanged.name, routePortChanged.arguments(for: change)))
            }
            return signals
        case .accessory(let change): return [(accessoryChanged.name, accessoryChanged.arguments(for: change))]
        case .playback(let change):
            return [(playbackChanged.name, playbackChanged.arguments(for: change)), (playbackDetail.name, playbackDetail.arguments(for: change))]
        case .hostAddresses(let change): return [(hostAddressesChanged.name, hostAddressesChanged.arguments(for: change))]
        case .streamMoved(let move): return [(streamMoved.name, streamMoved.arguments(for: move))]
        // Told by PropertiesChanged of CallSource alone.
        case .callSource, .other: return []
        }
    }
}
