import WireFields
import ControlProtocol
import FoundationEssentials

extension DriverBoard.Entry {
    /// The entry as `status`, `list` and `current` publish it: the board keeps typed state
    /// (the battery report, the packet's time); the wire has percentages by part and ISO 8601.
    public var published: ControlWire.DriverEntry {
        var levels: [String: Int] = [:]
        if let battery {
            for (part, level) in [("left", battery.left), ("right", battery.right), ("case", battery.chargingCase), ("headset", battery.headset)] {
                if let level { levels[part] = level.percent }
            }
        }
        var entry = ControlWire.DriverEntry(
            address: address.description, family: family, name: name, connection: connection.rawValue, problem: problem,
            battery: levels.isEmpty ? nil : levels, lastPacket: lastPacket.map { $0.formatted(.iso8601) }, packets: packets, skipped: skipped)
        switch wear {
        case .reported(let how): (entry.wear, entry.wearDetail) = ("reported", how)
        case .notReported(let why): (entry.wear, entry.wearDetail) = ("not-reported", why)
        case nil: break
        }
        entry.desktopBattery = desktopBattery
        return entry
    }
}
