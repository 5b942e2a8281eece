/// A device's routes (SPA `EnumRoute` / `Route` params): the ports of a sound card — speakers,
/// headphone jack, HDMI — with whether something is plugged in. ALSA and BlueZ devices publish
/// them; WirePlumber judges a node by them (a node whose route is `available: no` is never its
/// default). A node belongs to its device's routes through `card.profile.device`.
public enum RouteAvailability: String, Sendable, Hashable, Codable, CaseIterable {
    case unknown, no, yes

    /// `unknown` counts as available, as WirePlumber counts it.
    public var isAvailable: Bool { self != .no }
}

public struct DeviceRoute: Sendable, Hashable, Codable {
    public var index: Int
    public var direction: PortDirection
    /// `analog-output-headphones`, `hdmi-output-1`.
    public var name: String
    /// `Headphones`, `HDMI / DisplayPort 2`.
    public var description: String?
    public var priority: Int
    public var available: RouteAvailability
    /// `port.type` from the route's info: `headphones`, `speaker`, `hdmi`, `spdif`, `line`…
    public var portType: String?
    /// The card profile devices (`card.profile.device` of nodes) the route serves.
    public var devices: RouteIndexSet
    /// The profiles (indexes) the route exists in.
    public var profiles: RouteIndexSet
    /// Set on an active `Route` only: the profile device it is active on.
    public var device: Int?
    /// Set on an active `Route` only: the profile it is active in.
    public var profile: Int?

    public init(
        index: Int, direction: PortDirection, name: String, description: String? = nil, priority: Int = 0,
        available: RouteAvailability = .unknown, portType: String? = nil, devices: RouteIndexSet = [], profiles: RouteIndexSet = [],
        device: Int? = nil, profile: Int? = nil
    ) {
        self.index = index
        self.direction = direction
        self.name = name
        self.description = description
        self.priority = priority
        self.available = available
        self.portType = portType
        self.devices = devices
        self.profiles = profiles
        self.device = device
        self.profile = profile
    }

    /// What a user reads: the description, else the name.
    public var label: String { description ?? name }
}

/// What a device says about its routes. Every list is capped (`limit`): a device that
/// publishes more is read up to the cap and the rest counted as dropped.
public struct DeviceRoutes: Sendable, Hashable, Codable {
    /// `EnumRoute`: every route of the device, in every profile.
    public var all: [DeviceRoute]
    /// `Route`: the routes active now, one per profile device.
    public var active: [DeviceRoute]
    /// `Profile`: the index of the current profile, when known.
    public var profile: Int?

    public static let limit = 256

    public init(all: [DeviceRoute] = [], active: [DeviceRoute] = [], profile: Int? = nil) {
        self.all = all
        self.active = active
        self.profile = profile
    }
}

/// What the routes say about one node (docs/policy.md §1): which route plays it now and whether
/// anything is plugged in.
public struct NodeRoute: Sendable, Hashable {
    /// The active route for the node's profile device, if the device says.
    public var active: DeviceRoute?
    /// False when every route of the node's profile device (in the current profile) is
    /// `available: no`, or its active route is.
    public var isAvailable: Bool
    /// The route the judgement names: the active one, else the best of the unavailable ones.
    public var port: DeviceRoute?
}

extension Graph {
    /// The routes of `node`'s device for the node's profile device, judged as WirePlumber does:
    /// the active `Route` for `card.profile.device` decides when it is there (`no` is out);
    /// otherwise the `EnumRoute` entries that list that profile device (and the current profile,
    /// when both are known) decide: out only when there are some and all are `no`. Nil when
    /// the node has no device, no `card.profile.device`, or the device no route information.
    public func route(of node: Node, direction: PortDirection = .output) -> NodeRoute? {
        guard let deviceID = node.deviceID, let routes = devices[deviceID]?.routes,
            let profileDevice = node.props["card.profile.device"].flatMap({ Int($0) })
        else { return nil }
        let active = routes.active.first { $0.device == profileDevice && $0.direction == direction }
        let candidates = routes.candidates(for: profileDevice, direction: direction)
        if let active {
            // The active route's own availability, refreshed from EnumRoute where it is newer.
            var current = active
            if let listed = candidates.first(where: { $0.index == active.index && $0.name == active.name }) {
                current.available = listed.available
                current.portType = current.portType ?? listed.portType
                current.description = current.description ?? listed.description
            }
            // A plugged route of the same profile device keeps the node (the card switches to
            // it, as ACP does on a jack event); the active one alone going `no` does not.
            let anyOther = candidates.contains { $0.available.isAvailable }
            return NodeRoute(active: current, isAvailable: current.available.isAvailable || anyOther, port: current)
        }
        guard !candidates.isEmpty else { return nil }
        let available = candidates.contains { $0.available.isAvailable }
        let best = candidates.max { a, b in a.priority != b.priority ? a.priority < b.priority : a.index > b.index }
        return NodeRoute(active: nil, isAvailable: available, port: best)
    }
}

extension DeviceRoutes {
    /// The routes of `direction` that serve `profileDevice` in the current profile (every
    /// profile when the device does not say which is current, or the route lists none).
    public func candidates(for profileDevice: Int, direction: PortDirection) -> [DeviceRoute] {
        all.filter { route in
            route.direction == direction && route.devices.contains(profileDevice)
                && (profile.map { route.profiles.isEmpty || route.profiles.contains($0) } ?? true)
        }
    }

    /// These routes with the route `name` set to `available` everywhere it is listed (EnumRoute
    /// and, when active, Route), and, with `activate`, made the active route of every profile
    /// device it serves, as a card does when it switches port. Nil when no route has that name.
    public func setting(_ name: String, available: RouteAvailability, activate: Bool = false) -> DeviceRoutes? {
        let listed = all.firstIndex { $0.name == name }
        guard listed != nil || active.contains(where: { $0.name == name }) else { return nil }
        var result = self
        for index in result.all.indices where result.all[index].name == name { result.all[index].available = available }
        for index in result.active.indices where result.active[index].name == name { result.active[index].available = available }
        if activate, let listed {
            let route = result.all[listed]
            for device in route.devices {
                var current = route
                current.device = device
                current.profile = profile ?? route.profiles.first
                if let at = result.active.firstIndex(where: { $0.device == device && $0.direction == route.direction }) {
                    result.active[at] = current
                } else {
                    result.active.append(current)
                }
            }
        }
        return result
    }

    /// The routes whose availability or activity differ between `self` and `newer`, as
    /// (name, availability now, active now): what a recording writes as `route` events.
    /// Availability changes come before activations: a reading that caught a jack and the
    /// session manager's port switch at once replays as the jack, then the switch (the other
    /// order would hide the unplug behind the switch).
    public func changes(to newer: DeviceRoutes) -> [(name: String, available: RouteAvailability, active: Bool)] {
        let all = unorderedChanges(to: newer)
        return all.filter { !$0.active } + all.filter(\.active)
    }

    private func unorderedChanges(to newer: DeviceRoutes) -> [(name: String, available: RouteAvailability, active: Bool)] {
        var result: [(String, RouteAvailability, Bool)] = []
        let activeBefore = Set(active.map(\.name)), activeAfter = Set(newer.active.map(\.name))
        for route in newer.all {
            let old = all.first { $0.name == route.name }
            let becameActive = activeAfter.contains(route.name) && !activeBefore.contains(route.name)
            if old?.available != route.available || becameActive {
                result.append((route.name, route.available, becameActive))
            }
        }
        return result
    }
}
