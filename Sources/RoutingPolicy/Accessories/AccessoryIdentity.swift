/// Which sinks an accessory is: a Bluetooth address (matching `api.bluez5.address` on the node
/// or its device) or one `node.name`.
public enum AccessoryIdentity: Sendable, Hashable, Comparable, CustomStringConvertible {
    case address(BluetoothAddress)
    case nodeName(String)

    /// Text with a colon is an address attempt (node names never contain one in practice), so a
    /// mistyped address is refused instead of silently naming a node that does not exist. The
    /// dash (`AA-BB-CC-DD-EE-FF`) and bare-hex (`AABBCCDDEEFF`) forms are addresses too,
    /// normalised. Blank text, text with whitespace at either end, and a name longer than
    /// `maximumNameBytes` name nothing.
    public init?(parsing text: String) {
        guard text.utf8.count <= Self.maximumNameBytes else { return nil }
        if text.contains(":" as Character) {
            guard let address = BluetoothAddress(text) else { return nil }
            self = .address(address)
        } else if let address = BluetoothAddress.anyForm(text) {
            self = .address(address)
        } else if text.isEmpty || text.first!.isWhitespace || text.last!.isWhitespace || text.contains(where: { $0.isNewline }) {
            return nil
        } else {
            self = .nodeName(text)
        }
    }

    /// The longest `node.name` an accessory may be known by, in UTF-8 bytes: one limit for the
    /// control socket, D-Bus, the CLI and the state file (PipeWire's own names are far shorter).
    public static let maximumNameBytes = 1024

    public var description: String {
        switch self {
        case .address(let address): address.description
        case .nodeName(let name): name
        }
    }

    public static func < (a: AccessoryIdentity, b: AccessoryIdentity) -> Bool {
        switch (a, b) {
        case (.address(let x), .address(let y)): x < y
        case (.nodeName(let x), .nodeName(let y)): x < y
        case (.address, .nodeName): true
        case (.nodeName, .address): false
        }
    }
}
