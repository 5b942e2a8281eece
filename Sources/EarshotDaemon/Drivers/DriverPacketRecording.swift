import AccessoryDrivers
import RoutingPolicy

/// Where a driver writes each packet it sends and receives (`--log-driver-packets FILE`).
protocol DriverPacketRecording: Sendable {
    func record(address: BluetoothAddress, family: AccessoryFamily, incoming: Bool, bytes: [UInt8])
}

extension DriverPacketLog: DriverPacketRecording {
    func record(address: BluetoothAddress, family: AccessoryFamily, incoming: Bool, bytes: [UInt8]) {
        record(incoming ? .received : .sent, bytes, device: PacketLogLine.Device(address: address, family: family))
    }
}

extension DriverCounters {
    /// Every packet or frame skipped, whatever the reason.
    var skippedTotal: Int { unknownOpcodes + malformed + badCRC + oversized }
}
