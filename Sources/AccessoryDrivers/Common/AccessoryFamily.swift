/// Which wear-state protocol a Bluetooth device speaks, judged from what BlueZ's
/// `org.bluez.Device1` exposes.
public enum AccessoryFamily: Sendable, Hashable {
    /// AirPods and Beats: AAP on L2CAP PSM 0x1001.
    case aap
    /// Galaxy Buds of one generation, over RFCOMM.
    case galaxyBuds(GalaxyBudsModel)
    /// Sony headphones or earbuds speaking MDR over RFCOMM, on the service they offer
    /// (`SonyServiceUUID`: v2 when listed, else v1).
    case sony(SonyForm, service: String)

    /// The family without the model: what a built-in driver is named and switched by
    /// (`[drivers] aap`, `galaxy-buds`; the reporter `org.earshot.driver.<kind>`).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case aap
        case galaxyBuds = "galaxy-buds"
        case sony
    }

    public var kind: Kind {
        switch self {
        case .aap: .aap
        case .galaxyBuds: .galaxyBuds
        case .sony: .sony
        }
    }

    /// AAP's SDP service UUID, and the same bytes reversed (some stacks list it that way).
    public static let aapServiceUUIDs: Set<String> = [
        "74ec2172-0bad-4d01-8f77-997b2be0722a",
        "2a72e02b-7b99-778f-014d-ad0b7221ec74",
    ]

    /// The RFCOMM service to connect to; nil for AAP (L2CAP, `AAPPacket.psm`).
    public var rfcommServiceUUID: String? {
        switch self {
        case .aap: nil
        case let .galaxyBuds(model): model.rfcommServiceUUID
        case let .sony(_, service): service
        }
    }

    /// The family of a device from its `Modalias`, `UUIDs` and `Name` (or `Alias`) properties;
    /// nil for anything else (keyboards, phones, other headsets).
    ///
    /// Only service UUIDs a public project ties to the protocol decide: the vendor alone says
    /// nothing (Apple also makes keyboards, Samsung phones). A Sony set's form (headphones or
    /// earbuds) comes from its product id or name (`SonyModels.form`). The one shared UUID, the standard
    /// Serial Port Profile used by Buds+, Live and Pro, additionally needs a name mentioning
    /// "Buds" and either Samsung's vendor id or "Galaxy" in the name.
    public static func identify(modalias: String?, uuids: [String], name: String?) -> AccessoryFamily? {
        let services = Set(uuids.map { $0.lowercased() })
        if !services.isDisjoint(with: aapServiceUUIDs) { return .aap }
        for service in [SonyServiceUUID.v2, SonyServiceUUID.v1] where services.contains(service) {
            let modalias = modalias.flatMap(BluetoothModalias.init)
            let product = modalias.flatMap { $0.isSony ? $0.product : nil }
            return .sony(SonyModels.form(product: product, name: name), service: service)
        }
        if services.contains(GalaxyBudsServiceUUID.secondGeneration) { return .galaxyBuds(.secondGenerationOrLater) }
        if services.contains(GalaxyBudsServiceUUID.firstGeneration) { return .galaxyBuds(.firstGeneration) }
        if services.contains(GalaxyBudsServiceUUID.serialPort) {
            let lowerName = name?.lowercased() ?? ""
            let samsung = modalias.flatMap(BluetoothModalias.init)?.isSamsung ?? false
            if (lowerName.firstRange(of: "buds") != nil), samsung || (lowerName.firstRange(of: "galaxy") != nil) {
                return .galaxyBuds(.plusLiveOrPro)
            }
        }
        return nil
    }
}
