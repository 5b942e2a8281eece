/// BlueZ's `Modalias` property (from the device's Device ID record), e.g.
/// `bluetooth:v004Cp2014d0E60`: vendor source (bluetooth = Bluetooth SIG company id, usb = USB-IF
/// vendor id), vendor, product, version, each four hex digits.
struct BluetoothModalias: Sendable, Hashable {
    enum Source: String, Sendable {
        case bluetooth
        case usb
    }

    var source: Source
    var vendor: UInt16
    var product: UInt16

    init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let source = Source(rawValue: parts[0].lowercased()) else { return nil }
        let fields = Array(parts[1].lowercased().utf8)
        // v XXXX p XXXX (d XXXX): the version is not needed.
        guard fields.count >= 10, fields[0] == UInt8(ascii: "v"), fields[5] == UInt8(ascii: "p"),
              let vendor = UInt16(String(decoding: fields[1..<5], as: UTF8.self), radix: 16),
              let product = UInt16(String(decoding: fields[6..<10], as: UTF8.self), radix: 16)
        else { return nil }
        self.source = source
        self.vendor = vendor
        self.product = product
    }

    /// Apple: Bluetooth SIG company id 0x004C, USB vendor id 0x05AC.
    var isApple: Bool { (source == .bluetooth && vendor == 0x004C) || (source == .usb && vendor == 0x05AC) }
    /// Samsung Electronics: Bluetooth SIG company id 0x0075, USB vendor id 0x04E8.
    var isSamsung: Bool { (source == .bluetooth && vendor == 0x0075) || (source == .usb && vendor == 0x04E8) }
    /// Sony: USB vendor id 0x054C (as Sony headsets list it), Bluetooth SIG company id 0x012D.
    var isSony: Bool { (source == .usb && vendor == 0x054C) || (source == .bluetooth && vendor == 0x012D) }
}
