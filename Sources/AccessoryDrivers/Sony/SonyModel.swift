/// Whether a Sony set is worn on the head or in the ears: it decides the placement a wear
/// report becomes (`on-head` or `in-ear`, each with `off-head`), and the battery shape.
public enum SonyForm: String, Sendable, Hashable, CaseIterable {
    /// WH-1000X, WH-CH and other headbands: one battery, `on-head` / `off-head`.
    case headphones = "sony"
    /// WF-1000X, LinkBuds, WF-C: two buds and a case, `in-ear` / `off-head` under `[drivers] in-ear`.
    case earbuds = "sony-earbuds"
}

/// The RFCOMM service a Sony set offers its MDR channel under (lower case, as BlueZ lists
/// them). The handshake's reply, not the service, tells the protocol version apart.
public enum SonyServiceUUID {
    /// Protocol v2 sets (WH-1000XM5/XM6, WH-CH520/CH720N, WF-1000XM4/XM5, LinkBuds S ...).
    public static let v2 = "956c7b26-d49a-4ba8-b03f-b17d393cb6e2"
    /// Protocol v1 sets (WH-1000XM3/XM4 ...).
    public static let v1 = "96cc203e-5068-46ad-b32d-e316f5e069ba"
}

/// Sony models told apart by their `Modalias` product id (USB vendor 0x054C) or name, where
/// the packets alone cannot tell (the form; which wear message a set answers).
public enum SonyModels {
    /// Product ids of earbuds (maniacx/test-bluetooth-battery-meter `sonyConfig.js`):
    /// WF-1000XM3 0CE0, WF-1000XM4 0DE1, WF-1000XM5 0E63, LinkBuds 0DDF, LinkBuds S 0DF4,
    /// WF-C700N 0EC4, WF-C510 0F36.
    public static let earbudProducts: Set<UInt16> = [0x0CE0, 0x0DE1, 0x0E63, 0x0DDF, 0x0DF4, 0x0EC4, 0x0F36]
    /// Name fragments of earbuds (Gadgetbridge's Sony coordinators, sonyConfig.js).
    static let earbudNames = ["wf-", "linkbuds"]

    /// The form from the product id, else the name; headphones when neither says earbuds.
    public static func form(product: UInt16?, name: String?) -> SonyForm {
        if let product, earbudProducts.contains(product) { return .earbuds }
        let lower = name?.lowercased() ?? ""
        return earbudNames.contains { lower.firstRange(of: $0) != nil } ? .earbuds : .headphones
    }
}
