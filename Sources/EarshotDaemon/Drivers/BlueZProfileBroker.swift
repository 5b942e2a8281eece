import Logging
import SystemBridge
import SystemPackage

/// Gets RFCOMM channels from BlueZ the way it expects: one `org.bluez.Profile1` object per
/// service UUID, registered with `ProfileManager1.RegisterProfile` (role client) the first
/// time a device needs it; `Device1.ConnectProfile` then makes BlueZ connect and hand the socket
/// over in `NewConnection`. BlueZ refuses a second registration of a UUID (AlreadyExists): then
/// another program (GalaxyBudsClient) has the channel.
actor BlueZProfileBroker {
    static let service = "org.bluez"
    static let profileInterface = "org.bluez.Profile1"
    /// How long BlueZ may take to connect and hand the channel over.
    static let connectTimeout: Duration = .seconds(20)
    /// How long the socket may come after ConnectProfile's answer.
    static let handOverTimeout: Duration = .seconds(5)
    /// ConnectProfile calls BlueZ answers "br-connection-busy" are made again this often, this
    /// many times in all (omarchy-headphones' sony-bridge: 1.5 s, 10 attempts).
    static let busyRetry: Duration = .milliseconds(1500)
    static let busyAttempts = 10

    private let bus: DBusConnection
    private let logger: Logger
    private var exported: Set<String> = []
    private var registered: Set<String> = []
    /// A RegisterProfile in flight per UUID, shared by every device that needs it meanwhile.
    private var registering: [String: Task<Result<Void, DriverTransportError>, Never>] = [:]
    /// A ConnectProfile in flight per device, waiting for BlueZ's NewConnection.
    private var waiting: [String: CheckedContinuation<FileDescriptor?, Never>] = [:]
    /// A channel BlueZ handed over before its waiter was there (it answers ConnectProfile after).
    private var arrived: [String: FileDescriptor] = [:]
    /// The unique bus name of BlueZ, read before each connection: a Profile1 call from anyone
    /// else (another program on the system bus offering a socket of its own) is refused.
    private var bluezOwner: String?

    init(bus: DBusConnection, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    static func objectPath(uuid: String) -> String {
        "/org/earshot/Earshot1/profile/" + uuid.replacing("-", with: "_")
    }

    /// The device's RFCOMM channel for `uuid`, connected by BlueZ.
    func connect(devicePath: String, uuid: String) async throws(DriverTransportError) -> FileDescriptor {
        try await register(uuid)
        guard waiting[devicePath] == nil else { throw .failed("a connection to \(devicePath) is already being made") }
        do {
            bluezOwner = try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", [.string(Self.service)], timeout: .seconds(5)
            ).first?.string
        } catch {
            throw Self.classify(error, what: "GetNameOwner \(Self.service)")
        }
        var attempt = 1
        while true {
            // Retired meanwhile (the device went): asking BlueZ to connect it again would undo that.
            if Task.isCancelled {
                arrived.removeValue(forKey: devicePath).map { _ = try? $0.close() }
                throw .failed("stopped before ConnectProfile \(uuid) on \(devicePath)")
            }
            do {
                _ = try await bus.call(
                    destination: Self.service, path: devicePath, interface: "org.bluez.Device1", member: "ConnectProfile", [.string(uuid)],
                    timeout: Self.connectTimeout)
                break
            } catch {
                arrived.removeValue(forKey: devicePath).map { _ = try? $0.close() }
                // Right after a headset connects BlueZ is often still setting its profiles up and
                // answers "br-connection-busy" (Sony sets nearly always, omarchy-headphones'
                // notes): that passes within seconds, so it is asked again soon, a few times,
                // before the driver's own backoff takes over.
                guard Self.isBusy(error), attempt < Self.busyAttempts, !Task.isCancelled else {
                    throw Self.classify(error, what: "ConnectProfile \(uuid) on \(devicePath)")
                }
                attempt += 1
                logger.debug("ConnectProfile \(uuid) on \(devicePath): BlueZ is busy; asking again (attempt \(attempt) of \(Self.busyAttempts))")
                do { try await Task.sleep(for: Self.busyRetry) } catch { throw .failed("stopped while BlueZ was busy with \(devicePath)") }
            }
        }
        if let descriptor = arrived.removeValue(forKey: devicePath) { return descriptor }
        // BlueZ answers ConnectProfile once NewConnection returned: it should be here already.
        // A BlueZ that never hands it over must not hold this driver (and the device) for ever.
        let deadline = Task { [weak self] in
            try? await Task.sleep(for: Self.handOverTimeout)
            await self?.cancel(devicePath: devicePath)
        }
        defer { deadline.cancel() }
        let descriptor = await withCheckedContinuation { continuation in waiting[devicePath] = continuation }
        guard let descriptor else { throw .failed("BlueZ connected \(devicePath) but handed no channel over") }
        return descriptor
    }

    /// A Profile1 method call (BlueZ calls them on the object registered for a UUID).
    func handle(_ call: DBusMethodCall) {
        guard let sender = call.sender, sender == bluezOwner else {
            call.reply.fail(name: "org.freedesktop.DBus.Error.AccessDenied", message: "only BlueZ (org.bluez) may call \(Self.profileInterface)")
            return
        }
        switch call.member {
        case "NewConnection":
            guard call.arguments.count >= 2, let device = call.arguments[0].string, case .fileDescriptor(let handed) = call.arguments[1],
                let descriptor = handed.take()
            else {
                call.reply.fail(name: "org.bluez.Error.InvalidArguments", message: "NewConnection takes (o device, h fd, a{sv} properties)")
                return
            }
            if let waiter = waiting.removeValue(forKey: device) {
                waiter.resume(returning: descriptor)
            } else {
                arrived.removeValue(forKey: device).map { _ = try? $0.close() }
                arrived[device] = descriptor
            }
            call.reply()
        case "RequestDisconnection":
            call.reply()
        case "Release":
            registered.removeAll()
            call.reply()
        default:
            call.reply.fail(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "\(call.member) is not a method of \(Self.profileInterface)")
        }
    }

    /// Forgets a device whose ConnectProfile was cancelled: a late channel is closed.
    func cancel(devicePath: String) {
        waiting.removeValue(forKey: devicePath)?.resume(returning: nil)
        arrived.removeValue(forKey: devicePath).map { _ = try? $0.close() }
    }

    /// Registers the profile for `uuid` once: devices needing the same UUID at once (Sony
    /// headphones and earbuds at login) share one RegisterProfile, so the second never gets
    /// BlueZ's AlreadyExists for Earshot's own registration (and never calls that "held").
    private func register(_ uuid: String) async throws(DriverTransportError) {
        guard !registered.contains(uuid) else { return }
        if let inFlight = registering[uuid] {
            try await inFlight.value.get()
            return
        }
        let attempt = Task { () async -> Result<Void, DriverTransportError> in
            do throws(DriverTransportError) { try await self.registerOnce(uuid) } catch { return .failure(error) }
            return .success(())
        }
        registering[uuid] = attempt
        let result = await attempt.value
        registering[uuid] = nil
        try result.get()
    }

    private func registerOnce(_ uuid: String) async throws(DriverTransportError) {
        guard !registered.contains(uuid) else { return }
        let path = Self.objectPath(uuid: uuid)
        if !exported.contains(path) {
            do {
                try await bus.exportObject(path: path) { [weak self] call in
                    guard let self else { return }
                    Task { await self.handle(call) }
                }
            } catch {
                throw .failed("cannot export \(Self.profileInterface) at \(path): \(error)")
            }
            exported.insert(path)
        }
        let options: DBusValue = .properties([
            "Role": .string("client"), "Name": .string("Earshot wear detection"), "AutoConnect": .boolean(false),
        ])
        do {
            _ = try await bus.call(
                destination: Self.service, path: "/org/bluez", interface: "org.bluez.ProfileManager1", member: "RegisterProfile",
                [.objectPath(path), .string(uuid), options], timeout: .seconds(10))
            registered.insert(uuid)
        } catch {
            throw Self.classify(error, what: "RegisterProfile \(uuid)")
        }
    }

    /// BlueZ's answer while the device's connection is still being set up.
    static func isBusy(_ error: DBusError) -> Bool {
        guard case .remote(_, let message) = error else { return false }
        return message.firstRange(of: "br-connection-busy") != nil
    }

    private static func classify(_ error: DBusError, what: String) -> DriverTransportError {
        guard case .remote(let name, let message) = error else { return .unavailable("\(what): \(error)") }
        switch name {
        case "org.bluez.Error.AlreadyExists", "org.bluez.Error.InProgress", "org.bluez.Error.AlreadyConnected":
            return .held("\(what): \(name): \(message)")
        case "org.bluez.Error.NotConnected", "org.bluez.Error.NotAvailable", "org.freedesktop.DBus.Error.UnknownObject",
            "org.freedesktop.DBus.Error.NoReply":
            return .unreachable("\(what): \(name): \(message)")
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .unavailable("BlueZ is not running (\(what))")
        default:
            return .failed("\(what): \(name): \(message)")
        }
    }
}
