import RoutingPolicy
import SystemBridge

/// The Device1 properties the mirror keeps, as far as BlueZ has told them: each nil until said
/// (or after BlueZ invalidated it). Read from an `a{sv}` property map within `BlueZLimits`; a
/// value of the wrong type, malformed or too big to keep counts as not said.
struct BlueZDeviceProperties: Sendable, Hashable {
    var address: BluetoothAddress?
    var name: String?
    var alias: String?
    var connected: Bool?
    var servicesResolved: Bool?
    var uuids: [String]?
    var modalias: String?
    var adapterPath: String?

    init() {}

    /// Reads a Device1 property map (`a{sv}`, variants already unwrapped by `dictionary`).
    init(_ map: [String: DBusValue]) {
        typealias Property = BlueZInterface.DeviceProperty
        address = map[BlueZInterface.addressProperty]?.string.flatMap { BluetoothAddress($0) }
        name = map[Property.name]?.string.map { Self.cut($0, toBytes: BlueZLimits.nameBytes) }
        alias = map[Property.alias]?.string.map { Self.cut($0, toBytes: BlueZLimits.nameBytes) }
        connected = map[Property.connected]?.bool
        servicesResolved = map[Property.servicesResolved]?.bool
        uuids = map[Property.uuids]?.stringList.map(Self.uuidSet)
        modalias = map[Property.modalias]?.string.flatMap { $0.utf8.count <= BlueZLimits.modaliasBytes ? $0 : nil }
        adapterPath = map[Property.adapter]?.string.flatMap { $0.utf8.count <= BlueZLimits.pathBytes ? $0 : nil }
    }

    /// A PropertiesChanged's changed properties: what `update` says replaces, the rest stays.
    mutating func merge(_ update: BlueZDeviceProperties) {
        address = update.address ?? address
        name = update.name ?? name
        alias = update.alias ?? alias
        connected = update.connected ?? connected
        servicesResolved = update.servicesResolved ?? servicesResolved
        uuids = update.uuids ?? uuids
        modalias = update.modalias ?? modalias
        adapterPath = update.adapterPath ?? adapterPath
    }

    /// A PropertiesChanged's invalidated properties: BlueZ invalidates a property when it
    /// stops existing (a Name no longer known, a Modalias gone), so each becomes not said.
    mutating func forget(_ names: [String]) {
        typealias Property = BlueZInterface.DeviceProperty
        for name in names {
            switch name {
            case BlueZInterface.addressProperty: address = nil
            case Property.name: self.name = nil
            case Property.alias: alias = nil
            case Property.connected: connected = nil
            case Property.servicesResolved: servicesResolved = nil
            case Property.uuids: uuids = nil
            case Property.modalias: modalias = nil
            case Property.adapter: adapterPath = nil
            default: break
            }
        }
    }

    /// The device as consumers see it; nil until its address and adapter are known (it
    /// cannot be told apart or reached without them). Flags not said are false.
    func info(path: String) -> BluetoothDeviceInfo? {
        guard let address, let adapterPath else { return nil }
        return BluetoothDeviceInfo(
            path: path, address: address, name: name, alias: alias, connected: connected ?? false,
            servicesResolved: servicesResolved ?? false, uuids: uuids ?? [], modalias: modalias, adapterPath: adapterPath)
    }

    /// UUIDs lowercased, sorted and each once, at most `BlueZLimits.uuids` of them; oversized
    /// ones dropped.
    private static func uuidSet(_ list: [String]) -> [String] {
        var kept = Set<String>()
        for uuid in list where uuid.utf8.count <= BlueZLimits.uuidBytes {
            kept.insert(uuid.lowercased())
            if kept.count == BlueZLimits.uuids { break }
        }
        return kept.sorted()
    }

    /// `text` cut to at most `limit` UTF-8 bytes, on a character boundary.
    static func cut(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            bytes += text[index..<next].utf8.count
            if bytes > limit { break }
            end = next
        }
        return String(text[..<end])
    }
}
