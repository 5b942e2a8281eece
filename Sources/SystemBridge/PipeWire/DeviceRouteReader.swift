import AudioGraph
import CPipeWire
import CPipeWireShims

/// Reads a device's routes as pw-dump does: when the device's info says its `EnumRoute`,
/// `Route` or `Profile` param changed (a new serial in the param's flags — a jack plugged, a
/// monitor switched off, a port or profile chosen), the three are enumerated again, then a
/// core round trip marks the end; only then does the device change, so a half-read list never
/// reaches the policy. Each enumeration's params come with the sequence number its request
/// returned (libpipewire's async result, not the one passed in). An older reading still in
/// flight is dropped when a newer one starts. Runs on the loop thread, lock held.
final class DeviceRouteReader {
    /// The params read, with the flags last seen for each (the serial bit flips on change).
    static let watched: [UInt32] = [SPA_PARAM_EnumRoute.rawValue, SPA_PARAM_Route.rawValue, SPA_PARAM_Profile.rawValue]
    private var seenFlags: [UInt32: UInt32] = [:]
    /// The reading in flight: its number (`begin`), the sequence numbers of its requests, and
    /// what came so far.
    private(set) var sequence: Int32 = 0
    private var requests: Set<Int32> = []
    private var all: [DeviceRoute] = []
    private var active: [DeviceRoute] = []
    private var profile: Int?
    private var readable: Set<UInt32> = []
    /// A reading is in flight; a change meanwhile only marks `stale`, and one more reading
    /// follows when this one ends: one reading in flight per device, however fast its params
    /// change (a chattering jack costs one request set per round trip, not one per change).
    private(set) var inFlight = false
    var stale = false
    /// The reading in flight passed its deadline unanswered (reported once); it stays in
    /// flight, and its routes count when they come.
    var silent = false
    /// The deadline of the reading in flight (`LoopDeadlines` token), while it runs.
    var deadline: UInt64?

    /// The params to read, whatever changed: a route list is only meaningful with the others
    /// of the same moment.
    var readableParams: [UInt32] { Self.watched.filter(readable.contains) }

    /// The params to enumerate again after an info event; empty when none changed.
    func changedParams(_ info: pw_device_info) -> [UInt32] {
        guard info.change_mask & UInt64(PW_DEVICE_CHANGE_MASK_PARAMS) != 0, let params = info.params else { return [] }
        var changed: [UInt32] = []
        var readableNow: Set<UInt32> = []
        for index in 0..<Int(info.n_params) {
            let param = params[index]
            guard Self.watched.contains(param.id), param.flags & UInt32(SPA_PARAM_INFO_READ) != 0 else { continue }
            readableNow.insert(param.id)
            if seenFlags[param.id] != param.flags {
                seenFlags[param.id] = param.flags
                changed.append(param.id)
            }
        }
        readable = readableNow
        // Whatever changed, all three are read again: a route list is only meaningful with the
        // others of the same moment.
        return changed.isEmpty ? [] : readableParams
    }

    /// A new reading numbered `sequence`: what came before is dropped.
    func begin(sequence: Int32) {
        self.sequence = sequence
        inFlight = true
        stale = false
        requests = []
        all = []
        active = []
        profile = nil
    }

    /// An enumeration request of the current reading went out; its params carry `sequence`.
    func requested(_ sequence: Int32) { requests.insert(sequence) }

    func param(sequence: Int32, id: UInt32, pod: UnsafePointer<spa_pod>?) {
        guard requests.contains(sequence), let pod else { return }
        if id == SPA_PARAM_Profile.rawValue {
            var index: Int32 = 0
            if CPipeWire_parse_profile_index(pod, &index) == 0 { profile = Int(index) }
            return
        }
        // Each list is read up to `DeviceRoutes.limit`, as a dump's is; a card never has more.
        var raw = CPipeWire_route()
        guard CPipeWire_parse_route(pod, &raw) == 0, let route = Self.route(raw) else { return }
        if id == SPA_PARAM_EnumRoute.rawValue, all.count < DeviceRoutes.limit {
            all.append(route)
        } else if id == SPA_PARAM_Route.rawValue, active.count < DeviceRoutes.limit {
            active.append(route)
        }
    }

    /// The routes read under `sequence`, or nil when a newer enumeration replaced it.
    func finish(sequence: Int32) -> DeviceRoutes? {
        guard sequence == self.sequence else { return nil }
        inFlight = false
        return DeviceRoutes(all: all, active: active, profile: profile)
    }

    private static func route(_ raw: CPipeWire_route) -> DeviceRoute? {
        guard let name = LibPipeWire.string(raw.name) else { return nil }
        let available: RouteAvailability =
            switch raw.available {
            case SPA_PARAM_AVAILABILITY_yes.rawValue: .yes
            case SPA_PARAM_AVAILABILITY_no.rawValue: .no
            default: .unknown
            }
        var copy = raw
        let devices = withUnsafeBytes(of: &copy.devices) { Array($0.bindMemory(to: Int32.self).prefix(Int(raw.n_devices))) }
        let profiles = withUnsafeBytes(of: &copy.profiles) { Array($0.bindMemory(to: Int32.self).prefix(Int(raw.n_profiles))) }
        return DeviceRoute(
            index: Int(raw.index), direction: raw.direction == SPA_DIRECTION_INPUT.rawValue ? .input : .output, name: name,
            description: LibPipeWire.string(raw.description), priority: Int(raw.priority), available: available,
            portType: LibPipeWire.string(raw.port_type), devices: RouteIndexSet(devices.map(Int.init)), profiles: RouteIndexSet(profiles.map(Int.init)),
            device: raw.device >= 0 ? Int(raw.device) : nil, profile: raw.profile >= 0 ? Int(raw.profile) : nil)
    }
}
