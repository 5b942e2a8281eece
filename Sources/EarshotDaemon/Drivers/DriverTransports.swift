import AccessoryDrivers
import Dispatch
import SystemBridge

/// How a driver reaches its device: a connected channel, or why not.
protocol DriverTransports: Sendable {
    func open(_ device: DriverDevice, family: AccessoryFamily) async throws(DriverTransportError) -> BluetoothChannel
}

/// The real ways: AAP over a raw L2CAP socket on PSM 0x1001 (as the AirPods expect), Galaxy
/// Buds and Sony sets over RFCOMM handed over by BlueZ (`ProfileManager1.RegisterProfile`, then
/// `Device1.ConnectProfile`, then `Profile1.NewConnection`). With `loopbackDirectory` set
/// (`earshot daemon --bluetooth-loopback DIR`) AAP connects instead to a Unix SEQPACKET socket
/// named after the device (`DIR/AA_BB_CC_DD_EE_FF.aap`), for tests and protocol work: the raw
/// L2CAP socket is the one piece that needs a radio (Galaxy Buds' channel comes from BlueZ,
/// which a stand-in can hand over).
struct LiveDriverTransports: DriverTransports {
    static let aapPSM: UInt16 = 0x1001

    let loopbackDirectory: String?
    let profiles: BlueZProfileBroker?

    func open(_ device: DriverDevice, family: AccessoryFamily) async throws(DriverTransportError) -> BluetoothChannel {
        switch family {
        case .aap:
            if let loopbackDirectory {
                let path = "\(loopbackDirectory)/\(device.address.description.replacing(":", with: "_")).aap"
                return try await Self.blocking { () throws(BluetoothError) in try BluetoothChannel.connectLoopback(path: path, kind: .packets) }
            }
            let address = device.address.description
            return try await Self.blocking { () throws(BluetoothError) in try BluetoothChannel.connectL2CAP(to: address, psm: Self.aapPSM) }
        case .galaxyBuds, .sony:
            guard let profiles else { throw .unavailable("no D-Bus system bus: BlueZ cannot hand over the \(family.kind.productName) RFCOMM channel") }
            guard let uuid = family.rfcommServiceUUID else { throw .failed("no RFCOMM service known for \(family)") }
            let descriptor = try await profiles.connect(devicePath: device.path, uuid: uuid)
            return BluetoothChannel(adopting: descriptor, kind: .stream, peer: "\(device.address) RFCOMM (BlueZ)")
        }
    }

    /// A connect blocks its thread up to its deadline: never on the cooperative pool.
    private static func blocking(_ body: @escaping @Sendable () throws(BluetoothError) -> BluetoothChannel) async throws(DriverTransportError) -> BluetoothChannel {
        let result: Result<BluetoothChannel, BluetoothError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(BluetoothError) { continuation.resume(returning: .success(try body())) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        switch result {
        case .success(let channel): return channel
        case .failure(let error): throw DriverTransportError(error)
        }
    }
}
