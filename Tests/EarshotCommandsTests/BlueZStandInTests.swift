import WireFields
import AccessoryDrivers
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import SystemBridge
import SystemPackage
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The stand-in BlueZ itself (scripts/testing/bluez-standin), without Earshot's daemon: what a
/// headset driver will see of it over the private system bus, read with Earshot's own D-Bus
/// binding and decoded with Earshot's own protocol sessions (the stand-in shares no code with them).
@Suite("BlueZ stand-in", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct BlueZStandInTests {
    static let adapter = "11:22:33:44:55:66"
    static let airPods = "AA:BB:CC:DD:EE:01"
    static let buds = "AA:BB:CC:DD:EE:02"

    @Test("GetManagedObjects lists the presets so that Earshot identifies them; connect, disconnect and remove signal as BlueZ does")
    func devices() async throws {
        try await withSandbox(.init(systemBus: true)) { sandbox in
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": Self.adapter])
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let bus = try DBusConnection(.address(try #require(sandbox.environment["DBUS_SYSTEM_BUS_ADDRESS"])))
            defer { bus.close() }
            let (signals, arrived) = AsyncStream.makeStream(of: DBusSignal.self)
            try await bus.addMatch("type='signal',sender='org.bluez'") { arrived.yield($0) }

            try await bluez.addAirPods(Self.airPods)
            try await bluez.addGalaxyBuds(Self.buds, name: "Galaxy Buds2 (ABCD)")
            let added = try await signals.collect(timeout: .seconds(10)) { $0.member == "InterfacesAdded" && $0.arguments.first?.string == Self.path(Self.buds) }
            #expect(added.filter { $0.member == "InterfacesAdded" }.compactMap { $0.arguments.first?.string } == [Self.path(Self.airPods), Self.path(Self.buds)])
            #expect(added.last?.arguments.last?.dictionary?[DeviceKeys.interface]?.dictionary?["Name"] == .string("Galaxy Buds2 (ABCD)"))

            let objects = try await Self.managedObjects(bus)
            #expect(objects["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Address"] == .string(Self.adapter))
            let podsInterfaces = try #require(objects[Self.path(Self.airPods)])
            #expect(Set(podsInterfaces.keys) == ["org.freedesktop.DBus.Introspectable", DeviceKeys.interface, "org.freedesktop.DBus.Properties"])
            let pods = try #require(podsInterfaces[DeviceKeys.interface])
            #expect(pods["Address"] == .string(Self.airPods))
            #expect(pods["AddressType"] == .string("public"))
            #expect(pods["Name"] == .string("AirPods Pro") && pods["Alias"] == .string("AirPods Pro"))
            #expect(pods["Modalias"] == .string("bluetooth:v004Cp2014d0E60"))
            #expect(pods["Adapter"] == .objectPath("/org/bluez/hci0"))
            #expect(pods["Paired"] == .boolean(true) && pods["Trusted"] == .boolean(true))
            #expect(pods["Connected"] == .boolean(false) && pods["ServicesResolved"] == .boolean(false))
            let podsUUIDs = try #require(pods["UUIDs"]?.stringList)
            #expect(podsUUIDs.contains(BlueZStandIn.aapUUID))
            #expect(AccessoryFamily.identify(modalias: pods["Modalias"]?.string, uuids: podsUUIDs, name: pods["Name"]?.string) == .aap)
            let buds = try #require(objects[Self.path(Self.buds)]?[DeviceKeys.interface])
            #expect(buds["Modalias"] == .string("bluetooth:v0075pA013d0001"))
            let budsUUIDs = try #require(buds["UUIDs"]?.stringList)
            #expect(budsUUIDs.contains(BlueZStandIn.galaxyBuds2UUID))
            #expect(AccessoryFamily.identify(modalias: buds["Modalias"]?.string, uuids: budsUUIDs, name: buds["Name"]?.string)
                == .galaxyBuds(.secondGenerationOrLater))
            // The default name of the preset, and a device added by hand without Modalias.
            try await bluez.addGalaxyBuds("AA:BB:CC:DD:EE:03")
            try await bluez.addDevice("AA:BB:CC:DD:EE:04", name: "Some 'quoted' keyboard", uuids: ["00001124-0000-1000-8000-00805f9b34fb"])
            let more = try await Self.managedObjects(bus)
            #expect(more[Self.path("AA:BB:CC:DD:EE:03")]?[DeviceKeys.interface]?["Name"] == .string("Galaxy Buds2 (1234)"))
            let keyboard = try #require(more[Self.path("AA:BB:CC:DD:EE:04")]?[DeviceKeys.interface])
            #expect(keyboard["Name"] == .string("Some 'quoted' keyboard") && keyboard["Modalias"] == nil)
            #expect(AccessoryFamily.identify(modalias: nil, uuids: keyboard["UUIDs"]?.stringList ?? [], name: keyboard["Name"]?.string) == nil)
            _ = try await signals.collect(timeout: .seconds(10)) { $0.arguments.first?.string == Self.path("AA:BB:CC:DD:EE:04") }

            // Connected, then ServicesResolved: two PropertiesChanged; the reverse on disconnect.
            try await bluez.connect(Self.buds)
            let connected = try await signals.collect(timeout: .seconds(10)) { Self.changed($0)?["ServicesResolved"] != nil }
            #expect(connected.compactMap(Self.changed) == [["Connected": .boolean(true)], ["ServicesResolved": .boolean(true)]])
            #expect(connected.allSatisfy { $0.path == Self.path(Self.buds) && $0.arguments.first == .string(DeviceKeys.interface) })
            #expect(try await Self.property(bus, Self.buds, "Connected") == .boolean(true))
            await #expect(throws: FixtureError.self) { try await bluez.connect(Self.buds) }  // "error …": connected already

            try await bluez.disconnect(Self.buds)
            let disconnected = try await signals.collect(timeout: .seconds(10)) { Self.changed($0)?["Connected"] != nil }
            #expect(disconnected.compactMap(Self.changed) == [["ServicesResolved": .boolean(false)], ["Connected": .boolean(false)]])
            #expect(try await Self.property(bus, Self.buds, "Connected") == .boolean(false))

            // Device1.Connect acts like the command.
            _ = try await bus.call(destination: "org.bluez", path: Self.path(Self.airPods), interface: DeviceKeys.interface, member: "Connect")
            let viaMethod = try await signals.collect(timeout: .seconds(10)) { Self.changed($0)?["ServicesResolved"] != nil }
            #expect(viaMethod.compactMap(Self.changed) == [["Connected": .boolean(true)], ["ServicesResolved": .boolean(true)]])

            try await bluez.removeDevice(Self.airPods)
            let removed = try await signals.collect(timeout: .seconds(10)) { $0.member == "InterfacesRemoved" }
            #expect(removed.compactMap(Self.changed) == [["ServicesResolved": .boolean(false)], ["Connected": .boolean(false)]])
            #expect(removed.last?.arguments.first == .objectPath(Self.path(Self.airPods)))
            #expect(removed.last?.arguments.last?.stringList?.contains(DeviceKeys.interface) == true)
            #expect(try await Self.managedObjects(bus)[Self.path(Self.airPods)] == nil)
        }
    }

    @Test("RegisterProfile and ConnectProfile hand a working stream to the profile's NewConnection; the Galaxy Buds peer's frames decode with GalaxyBudsSession")
    func galaxyBudsProfile() async throws {
        try await withSandbox(.init(systemBus: true)) { sandbox in
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": Self.adapter])
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let address = try #require(sandbox.environment["DBUS_SYSTEM_BUS_ADDRESS"])
            let bus = try DBusConnection(.address(address))
            let other = try DBusConnection(.address(address))
            defer { bus.close(); other.close() }
            let uuid = BlueZStandIn.galaxyBuds2UUID
            let profilePath = "/org/earshot/test/galaxybuds"
            let (handed, hand) = AsyncStream.makeStream(of: DBusFileDescriptor.self)
            try await bus.exportObject(path: profilePath) { call in
                guard call.interface == "org.bluez.Profile1", call.member == "NewConnection", call.signature == "oha{sv}",
                      call.arguments[0] == .objectPath(Self.path(Self.buds)), let descriptor = call.arguments[1].fileDescriptor
                else { return call.reply.fail(name: "org.bluez.Error.Rejected", message: "unexpected \(call.member) \(call.signature)") }
                hand.yield(descriptor)
                call.reply()
            }
            try await bluez.addGalaxyBuds(Self.buds)

            // Not connected yet, then connected but nobody registered the UUID.
            #expect(await Self.remoteError { try await Self.connectProfile(bus, Self.buds, uuid) } == "org.bluez.Error.NotConnected")
            try await bluez.connect(Self.buds)
            #expect(await Self.remoteError { try await Self.connectProfile(bus, Self.buds, uuid) } == "org.bluez.Error.Failed")
            // Another program (GalaxyBudsClient) holding the channel: AlreadyExists.
            try await bluez.holdProfile(uuid)
            #expect(await Self.remoteError { try await Self.registerProfile(bus, profilePath, uuid) } == "org.bluez.Error.AlreadyExists")
            try await bluez.releaseProfile(uuid)
            try await Self.registerProfile(bus, profilePath, uuid)
            #expect(await Self.remoteError { try await Self.registerProfile(other, "/elsewhere", uuid) } == "org.bluez.Error.AlreadyExists")

            var mark = bluez.logMark()
            try await Self.connectProfile(bus, Self.buds, uuid)
            try await bluez.waitForLine(containing: "buds \(Self.buds) connected", since: mark)
            let descriptor = try #require(await handed.first { _ in true })
            let channel = BluetoothChannel(adopting: try #require(descriptor.take()), kind: .stream, peer: "stand-in buds")
            defer { channel.close() }
            let events = try channel.incoming()
            #expect(await Self.remoteError { try await Self.connectProfile(bus, Self.buds, uuid) } == "org.bluez.Error.AlreadyConnected")

            // What Earshot writes is printed; what the peer sends decodes.
            mark = bluez.logMark()
            try channel.send([0x01, 0xAB, 0xFF])
            try await bluez.waitForLine(containing: "buds \(Self.buds) received 01abff", since: mark)

            var session = GalaxyBudsSession(model: .secondGenerationOrLater)
            try await bluez.budsStatus(Self.buds, left: .wearing, right: .wearing, batteries: (90, 85, 40))
            let worn = try await Self.receive(events, into: &session) { $0.contains(.placement(.inEar)) }
            #expect(worn.outputs == [
                .placement(.inEar),
                .battery(BatteryReport(
                    left: BatteryLevel(percent: 90, isCharging: nil), right: BatteryLevel(percent: 85, isCharging: nil),
                    chargingCase: BatteryLevel(percent: 40, isCharging: nil))),
            ])
            #expect(session.buds == BudPair(.inEar, .inEar))
            #expect(session.counters.decoded == 1 && session.counters.badCRC == 0 && session.counters.skippedBytes == 0)

            // A frame cut across two reads, 50 ms apart.
            try await bluez.budsSplit(Self.buds, left: .idle, right: .inCase)
            let split = try await Self.receive(events, into: &session) { $0.contains(.placement(.offHead)) }
            #expect(split.reads >= 2)
            #expect(session.buds == BudPair(.outOfEar, .inCase))
            #expect(session.counters.decoded == 2)

            // Raw bytes and seeded garbage arrive as given (in however many reads).
            try await bluez.budsRaw(Self.buds, [0xFD, 0x00, 0xDD])
            #expect(try await Self.receiveBytes(events, count: 3) == [0xFD, 0x00, 0xDD])
            try await bluez.budsGarbage(Self.buds, count: 40)
            #expect(try await Self.receiveBytes(events, count: 40).count == 40)

            // Earshot closes its end: the peer says so; a new connection works, and DisconnectProfile
            // or a device disconnect closes it from the stand-in's side.
            mark = bluez.logMark()
            channel.close()
            try await bluez.waitForLine(containing: "buds \(Self.buds) closed", since: mark)
            try await Self.connectProfile(bus, Self.buds, uuid)
            let again = BluetoothChannel(adopting: try #require(await handed.first { _ in true }?.take()), kind: .stream, peer: "stand-in buds")
            defer { again.close() }
            let againEvents = try again.incoming()
            try await bluez.budsStatus(Self.buds, left: .wearing, right: .disconnected)
            var second = GalaxyBudsSession(model: .secondGenerationOrLater)
            let oneBud = try await Self.receive(againEvents, into: &second) { $0.contains(.placement(.inEar)) }
            #expect(oneBud.outputs.contains(.battery(BatteryReport(left: BatteryLevel(percent: 80, isCharging: nil), chargingCase: BatteryLevel(percent: 60, isCharging: nil)))))
            // DisconnectProfile closes the stand-in's end (of that UUID only).
            #expect(await Self.remoteError { try await Self.disconnectProfile(bus, Self.buds, BlueZStandIn.aapUUID) } == "org.bluez.Error.NotConnected")
            try await Self.disconnectProfile(bus, Self.buds, uuid)
            #expect(try await Self.next(againEvents) == .ended(nil))
            try await Self.connectProfile(bus, Self.buds, uuid)
            let third = BluetoothChannel(adopting: try #require(await handed.first { _ in true }?.take()), kind: .stream, peer: "stand-in buds")
            defer { third.close() }
            let thirdEvents = try third.incoming()
            try await bluez.disconnect(Self.buds)
            #expect(try await Self.next(thirdEvents) == .ended(nil))

            // The owner leaving the bus drops its registration (as BlueZ watches it).
            bus.close()
            try await bluez.waitForLine(containing: "profile \(uuid) dropped")
            try await Self.registerProfile(other, "/elsewhere", uuid)
        }
    }

    @Test("with --loopback-dir a connected AirPods listens for AAP on a SEQPACKET socket; packets go both ways whole and decode with AAPSession")
    func aapLoopback() async throws {
        try await withSandbox(.init(systemBus: true)) { sandbox in
            let directory = sandbox.root.appendingPathComponent("aap").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": Self.adapter], loopbackDir: directory)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            try await bluez.addAirPods(Self.airPods)
            let socketPath = try #require(bluez.aapSocketPath(Self.airPods))
            #expect(socketPath == "\(directory)/AA_BB_CC_DD_EE_01.aap")
            #expect(!FileManager.default.fileExists(atPath: socketPath), "no listener before the device connects")
            try await bluez.connect(Self.airPods)

            var mark = bluez.logMark()
            let channel = BluetoothChannel(adopting: try Self.connectSeqPacket(socketPath), kind: .packets, peer: "stand-in AirPods")
            defer { channel.close() }
            let events = try channel.incoming()
            try await bluez.waitForLine(containing: "aap \(Self.airPods) connected", since: mark)

            // AAPSession's own opening, as the public clients run it: the handshake; the
            // stand-in replies as firmware does; the feature flags; their acknowledgement; the
            // notification request. Each one packet.
            var session = AAPSession()
            for case .send(let packet) in session.start() { try channel.send(packet) }
            try await bluez.waitForLine(containing: "aap \(Self.airPods) received 00000400010002000000000000000000", since: mark)
            for _ in 0..<2 {
                for case .send(let packet) in session.receive(packet: try await Self.nextPacket(events)) { try channel.send(packet) }
            }
            try await bluez.waitForLine(containing: "aap \(Self.airPods) received 040004004d00ff00000000000000", since: mark)
            try await bluez.waitForLine(containing: "aap \(Self.airPods) received 040004000f00ffffffff", since: mark)
            #expect(session.stage == .awaitingNotifications)

            try await bluez.aapEar(Self.airPods, primary: .inEar, secondary: .outOfEar)
            let ear = try await Self.nextPacket(events)
            #expect(ear == [0x04, 0x00, 0x04, 0x00, 0x06, 0x00, 0x00, 0x01])
            #expect(ear == AAPPacket.earDetection(primary: .inEar, secondary: .outOfEar))
            #expect(session.receive(packet: ear) == [.placement(.inEar)])
            #expect(session.buds == BudPair(.inEar, .outOfEar))

            try await bluez.aapBattery(Self.airPods, left: 90, right: 80, chargingCase: 70)
            let battery = try await Self.nextPacket(events)
            #expect(battery == AAPPacket.battery([.init(.left, level: 90, .discharging), .init(.right, level: 80, .discharging), .init(.chargingCase, level: 70, .discharging)]))
            #expect(session.receive(packet: battery) == [.battery(BatteryReport(
                left: BatteryLevel(percent: 90, isCharging: false), right: BatteryLevel(percent: 80, isCharging: false),
                chargingCase: BatteryLevel(percent: 70, isCharging: false)))])
            try await bluez.aapEar(Self.airPods, primary: .inCase, secondary: .inCase)
            #expect(session.receive(packet: try await Self.nextPacket(events)) == [.placement(.offHead)])

            // One send, one packet: raw bytes whole, seeded garbage as separate packets.
            try await bluez.aapRaw(Self.airPods, [0x04, 0x00, 0x04, 0x00, 0x1D, 0x00])
            #expect(try await Self.nextPacket(events) == [0x04, 0x00, 0x04, 0x00, 0x1D, 0x00])
            try await bluez.aapGarbage(Self.airPods, packets: 5)
            for _ in 0..<5 {
                let packet = try await Self.nextPacket(events)
                #expect((1...64).contains(packet.count))
                _ = session.receive(packet: packet)  // anything goes: it must not trap
            }

            // A second client is turned away while one is connected.
            mark = bluez.logMark()
            let intruder = BluetoothChannel(adopting: try Self.connectSeqPacket(socketPath), kind: .packets)
            try await bluez.waitForLine(containing: "aap \(Self.airPods) refused a second connection", since: mark)
            #expect(try await Self.next(try intruder.incoming()) == .ended(nil))
            intruder.close()

            // The stand-in drops the connection: Earshot's read sees the end.
            try await bluez.aapClose(Self.airPods)
            #expect(try await Self.next(events) == .ended(nil))

            // Held by another program (LibrePods): a connect is refused until released.
            try await bluez.aapHold(Self.airPods)
            #expect(throws: Errno.connectionRefused) { _ = try Self.connectSeqPacket(socketPath) }
            try await bluez.aapRelease(Self.airPods)
            mark = bluez.logMark()
            let later = BluetoothChannel(adopting: try Self.connectSeqPacket(socketPath), kind: .packets)
            try await bluez.waitForLine(containing: "aap \(Self.airPods) connected", since: mark)
            // Earshot closes: the peer says so.
            later.close()
            try await bluez.waitForLine(containing: "aap \(Self.airPods) closed", since: mark)

            // Disconnect takes the listener away with the socket file.
            try await bluez.disconnect(Self.airPods)
            #expect(!FileManager.default.fileExists(atPath: socketPath))
            #expect(throws: Errno.noSuchFileOrDirectory) { _ = try Self.connectSeqPacket(socketPath) }
        }
    }

    // MARK: Helpers

    enum DeviceKeys {
        static let interface = "org.bluez.Device1"
    }

    static func path(_ address: String) -> String {
        "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    /// The changed properties of a Device1 PropertiesChanged, nil for any other signal.
    static func changed(_ signal: DBusSignal) -> [String: DBusValue]? {
        guard signal.member == "PropertiesChanged", signal.arguments.first == .string(DeviceKeys.interface) else { return nil }
        return signal.arguments[1].dictionary
    }

    static func managedObjects(_ bus: DBusConnection) async throws -> [String: [String: [String: DBusValue]]] {
        let reply = try await bus.call(destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        let objects = try #require(reply.first?.dictionary)
        return try objects.mapValues { interfaces in try #require(interfaces.dictionary).mapValues { try #require($0.dictionary) } }
    }

    static func property(_ bus: DBusConnection, _ address: String, _ name: String) async throws -> DBusValue? {
        let reply = try await bus.call(
            destination: "org.bluez", path: path(address), interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(DeviceKeys.interface), .string(name)])
        return reply.first?.unwrapped
    }

    static func registerProfile(_ bus: DBusConnection, _ profile: String, _ uuid: String) async throws {
        _ = try await bus.call(
            destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.ProfileManager1", member: "RegisterProfile",
            [.objectPath(profile), .string(uuid), .properties(["Role": .string("client")])])
    }

    static func connectProfile(_ bus: DBusConnection, _ address: String, _ uuid: String) async throws {
        _ = try await bus.call(destination: "org.bluez", path: path(address), interface: DeviceKeys.interface, member: "ConnectProfile", [.string(uuid)])
    }

    static func disconnectProfile(_ bus: DBusConnection, _ address: String, _ uuid: String) async throws {
        _ = try await bus.call(destination: "org.bluez", path: path(address), interface: DeviceKeys.interface, member: "DisconnectProfile", [.string(uuid)])
    }

    /// The D-Bus error name `body` failed with; nil if it succeeded or failed otherwise.
    static func remoteError(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let DBusError.remote(name, _) {
            return name
        } catch {
            return nil
        }
    }

    /// The next event of a channel, within `timeout`.
    static func next(_ events: AsyncStream<BluetoothChannel.Event>, timeout: Duration = .seconds(5)) async throws -> BluetoothChannel.Event {
        try await withThrowingTaskGroup(of: BluetoothChannel.Event.self) { group in
            group.addTask {
                for await event in events { return event }
                throw FixtureError("the channel's events ended")
            }
            group.addTask {
                try await Task.sleep(for: timeout)  // the deadline, raced against the reader
                throw FixtureError("nothing read within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    static func nextPacket(_ events: AsyncStream<BluetoothChannel.Event>) async throws -> [UInt8] {
        let event = try await next(events)
        guard case .received(let packet) = event else { throw FixtureError("expected a packet, got \(event)") }
        return packet
    }

    /// Reads into `session` until its outputs so far satisfy `done`: those outputs, and how many reads it took.
    static func receive(
        _ events: AsyncStream<BluetoothChannel.Event>, into session: inout GalaxyBudsSession, until done: ([DriverOutput]) -> Bool
    ) async throws -> (outputs: [DriverOutput], reads: Int) {
        var outputs: [DriverOutput] = []
        var reads = 0
        while !done(outputs) {
            outputs += session.receive(bytes: try await nextPacket(events))
            reads += 1
        }
        return (outputs, reads)
    }

    static func receiveBytes(_ events: AsyncStream<BluetoothChannel.Event>, count: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count { bytes += try await nextPacket(events) }
        return bytes
    }

    /// A connected AF_UNIX SOCK_SEQPACKET socket (as Earshot's loopback option will open), or the connect's errno.
    static func connectSeqPacket(_ path: String) throws -> FileDescriptor {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let error = Errno(rawValue: errno)
            Glibc.close(fd)
            throw error
        }
        return FileDescriptor(rawValue: fd)
    }
}
