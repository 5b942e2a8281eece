@testable import ControlProtocol
import ControlProtocol
import WireFields
import EarshotDaemon
import PipeWireTestSupport
import RoutingPolicy
import Synchronization
import TestScheduling
import Testing

@Suite("Accessory report session", .blockingCalls)
struct AccessoryReportSessionTests {
    static let accessory = AccessoryIdentity.address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!)
    static let capabilities: AccessoryCapabilities = [.audioSwitching, .placement]

    static func session() -> AccessoryReportSession {
        AccessoryReportSession(accessory: accessory, reporter: "org.earshot.driver.aap", capabilities: capabilities)
    }

    // MARK: - The pure state machine

    @Test("register with the newest placement, then update; nothing owed afterwards")
    func registerThenUpdate() {
        var session = Self.session()
        session.owe(.offHead)
        session.owe(.inEar)
        #expect(session.nextAction() == .register(.inEar))
        #expect(session.receive(.success, to: .register(.inEar)) == [])
        #expect(session.delivered == .inEar)
        #expect(session.nextAction() == nil)
        #expect(!session.hasWork)
        session.owe(.offHead)
        #expect(session.nextAction() == .update(.offHead))
        #expect(session.receive(.success, to: .update(.offHead)) == [])
        #expect(session.nextAction() == nil)
        #expect(session.registrations == 1)
    }

    @Test("with no placement known, an identical registration is left alone; another one is replaced")
    func existingRegistration() {
        var session = Self.session()
        #expect(session.nextAction() == .checkExisting)
        #expect(session.receive(.existing(reporter: "org.earshot.driver.aap", capabilities: Self.capabilities), to: .checkExisting) == [])
        #expect(session.registered)
        #expect(session.registrations == 0)
        #expect(session.nextAction() == nil)

        var other = Self.session()
        #expect(other.receive(.existing(reporter: "org.example.other", capabilities: Self.capabilities), to: .checkExisting) == [])
        #expect(other.nextAction() == .register(nil))
        var fewer = Self.session()
        #expect(fewer.receive(.existing(reporter: "org.earshot.driver.aap", capabilities: [.placement]), to: .checkExisting) == [])
        #expect(fewer.nextAction() == .register(nil))
        var none = Self.session()
        #expect(none.receive(.refused(AccessoryError(.unknown, "no registration")), to: .checkExisting) == [])
        #expect(none.nextAction() == .register(nil))
    }

    @Test("invalidated or unknown registers again and resends; twice in one round drops the placement",
          arguments: [AccessoryError.Code.invalidated, .unknown])
    func registrationGone(code: AccessoryError.Code) {
        var session = Self.session()
        session.owe(.onHead)
        _ = session.receive(.success, to: .register(.onHead))
        session.beginRound()
        session.owe(.offHead)
        let gone = AccessoryError(code, "gone")
        #expect(session.receive(.refused(gone), to: .update(.offHead)) == [.registrationGone(code, .offHead)])
        // The newest placement is the one registered with.
        #expect(session.nextAction() == .register(.offHead))
        #expect(session.receive(.success, to: .register(.offHead)) == [.registeredAgain(.offHead)])
        #expect(session.nextAction() == nil)

        // Refused again right after registering again: dropped, round over.
        session.beginRound()
        session.owe(.inEar)
        #expect(session.receive(.refused(gone), to: .update(.inEar)) == [.registrationGone(code, .inEar)])
        #expect(session.receive(.success, to: .register(.inEar)) == [.registeredAgain(.inEar)])
        session.owe(.onHead)
        #expect(session.receive(.refused(gone), to: .update(.onHead)) == [.registrationGone(code, .onHead), .droppedAfterRegisteringAgain(.onHead)])
        #expect(session.owed == nil)
        #expect(session.roundExhausted)
        #expect(session.nextAction() == nil)
        #expect(session.hasWork)  // the registration, next round
        session.beginRound()
        #expect(session.nextAction() == .register(.inEar))
    }

    @Test("another refusal drops the placement; a refused registration stops until a new placement")
    func refusals() {
        var session = Self.session()
        session.owe(.onHead)
        let owned = AccessoryError(.invalidRequest, "owned by org.example.other")
        #expect(session.receive(.refused(owned), to: .register(.onHead)) == [.registrationRefused(owned)])
        #expect(session.nextAction() == nil)
        #expect(!session.hasWork)
        session.owe(.offHead)
        #expect(session.nextAction() == .register(.offHead))
        _ = session.receive(.success, to: .register(.offHead))
        session.owe(.inEar)
        let notCapable = AccessoryError(.accessoryNotCapable, "no placement")
        #expect(session.receive(.refused(notCapable), to: .update(.inEar)) == [.updateRefused(notCapable, .inEar)])
        #expect(session.owed == nil)
        #expect(session.delivered == .offHead)
        #expect(session.nextAction() == nil)
    }

    @Test("a lost connection registers again with the last placement delivered")
    func connectionLost() {
        var session = Self.session()
        session.owe(.onHead)
        _ = session.receive(.success, to: .register(.onHead))
        session.owe(.offHead)
        #expect(session.receive(.connectionLost, to: .update(.offHead)) == [])
        #expect(session.nextAction() == .register(.offHead))
        _ = session.receive(.success, to: .register(.offHead))
        session.connectionLost()
        session.beginRound()
        #expect(session.nextAction() == .register(.offHead))
    }

    @Test("a disconnected accessory is unregistered once; one never registered is not")
    func unregister() {
        var session = Self.session()
        session.disconnectAccessory()
        #expect(!session.hasWork)
        #expect(session.nextAction() == nil)
        session.owe(.onHead)
        _ = session.receive(.success, to: .register(.onHead))
        session.disconnectAccessory()
        #expect(session.nextAction() == .unregister)
        #expect(session.request(for: .unregister) == .unregister(Self.accessory, reporter: "org.earshot.driver.aap"))
        #expect(session.receive(.success, to: .unregister) == [])
        #expect(session.delivered == nil)
        #expect(!session.registered)
        // Back again: registers afresh.
        session.owe(.inEar)
        #expect(session.nextAction() == .register(.inEar))
    }

    // MARK: - Over DaemonControl

    @Test("deliver over the in-memory daemon: register, update, re-register after the registration went away")
    func deliverInMemory() async {
        let control = InMemoryDaemonControl()
        var session = Self.session()
        session.owe(.inEar)
        #expect(await session.deliver(over: control) == [])
        #expect(await control.current(Self.accessory) == .success(AccessoryConfiguration(capabilities: Self.capabilities, placement: .inEar)))
        #expect(await control.reporter(of: Self.accessory) == "org.earshot.driver.aap")
        session.owe(.offHead)
        #expect(await session.deliver(over: control) == [])
        #expect(await control.current(Self.accessory) == .success(AccessoryConfiguration(capabilities: Self.capabilities, placement: .offHead)))

        // Someone else unregisters it: the next update is answered `unknown`, so register again.
        _ = await control.perform(.unregister(Self.accessory))
        session.owe(.onHead)
        #expect(await session.deliver(over: control) == [.registrationGone(.unknown, .onHead), .registeredAgain(.onHead)])
        #expect(await control.current(Self.accessory) == .success(AccessoryConfiguration(capabilities: Self.capabilities, placement: .onHead)))
        #expect(await control.performed == [
            .register(Self.accessory, reporter: "org.earshot.driver.aap", AccessoryConfiguration(capabilities: Self.capabilities, placement: .inEar)),
            .update(Self.accessory, AccessoryUpdate(placement: .set(.offHead)), reporter: "org.earshot.driver.aap"),
            .unregister(Self.accessory),
            .update(Self.accessory, AccessoryUpdate(placement: .set(.onHead)), reporter: "org.earshot.driver.aap"),
            .register(Self.accessory, reporter: "org.earshot.driver.aap", AccessoryConfiguration(capabilities: Self.capabilities, placement: .onHead)),
        ])
    }

    @Test("a registration restored by the daemon (same reporter and capabilities) is left alone")
    func deliverKeepsRestored() async {
        let control = InMemoryDaemonControl()
        let restored = AccessoryConfiguration(capabilities: Self.capabilities, placement: .onHead)
        _ = await control.perform(.register(Self.accessory, reporter: "org.earshot.driver.aap", restored))
        var session = Self.session()
        #expect(await session.deliver(over: control) == [])
        #expect(session.registered)
        #expect(await control.performed.count == 1)
        #expect(await control.current(Self.accessory) == .success(restored))
    }

    /// Answers register and update from a script; records what it was asked.
    actor ScriptedControl: DaemonControl {
        var replies: [Result<AccessoryConfiguration?, AccessoryError>]
        private(set) var performed: [AccessoryRequest] = []

        init(_ replies: [Result<AccessoryConfiguration?, AccessoryError>]) { self.replies = replies }

        func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError> {
            performed.append(request)
            return replies.isEmpty ? .success(nil) : replies.removeFirst()
        }

        func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError> {
            .failure(AccessoryError(.unknown, "none"))
        }
        func list() async -> [ControlWire.ListedAccessory] { [] }
        func status() async -> ControlWire.Status { ControlWire.Status(mode: .disconnected, remote: "", connected: false, sessionManager: nil, decision: nil) }
        func subscribe() async -> AsyncStream<ControlWire.Event> { AsyncStream { $0.finish() } }
    }

    @Test("invalidated over DaemonControl: registers again with the newest placement, one round")
    func deliverRegistersAgainAfterInvalidation() async {
        let gone = AccessoryError(.invalidated, "dropped by a config reload")
        let control = ScriptedControl([.success(nil), .failure(gone), .success(nil)])
        var session = Self.session()
        session.owe(.onHead)
        #expect(await session.deliver(over: control) == [])
        session.owe(.offHead)
        #expect(await session.deliver(over: control) == [.registrationGone(.invalidated, .offHead), .registeredAgain(.offHead)])
        #expect(await control.performed == [
            .register(Self.accessory, reporter: "org.earshot.driver.aap", AccessoryConfiguration(capabilities: Self.capabilities, placement: .onHead)),
            .update(Self.accessory, AccessoryUpdate(placement: .set(.offHead)), reporter: "org.earshot.driver.aap"),
            .register(Self.accessory, reporter: "org.earshot.driver.aap", AccessoryConfiguration(capabilities: Self.capabilities, placement: .offHead)),
        ])
        #expect(await session.deliver(over: control) == [])
        #expect(await control.performed.count == 3)
        // A refused registration stops the session until a new placement.
        let owned = AccessoryError(.invalidRequest, "owned by org.example.other")
        let refusing = ScriptedControl([.failure(owned)])
        var refused = Self.session()
        refused.owe(.onHead)
        #expect(await refused.deliver(over: refusing) == [.registrationRefused(owned)])
        #expect(await refused.deliver(over: refusing) == [])
        #expect(await refusing.performed.count == 1)
    }

    @Test("a driver's use: placements in, unregister when the headset disconnects")
    func driverUse() async {
        let control = InMemoryDaemonControl()
        var session = Self.session()
        session.owe(.inEar)
        #expect(await session.deliver(over: control) == [])
        session.owe(.offHead)
        #expect(await session.deliver(over: control) == [])
        #expect(await control.current(Self.accessory) == .success(AccessoryConfiguration(capabilities: Self.capabilities, placement: .offHead)))
        session.disconnectAccessory()
        #expect(await session.deliver(over: control) == [])
        #expect(await control.list().isEmpty)
        #expect(session.hasWork == false)
        #expect(await control.performed.last == .unregister(Self.accessory, reporter: "org.earshot.driver.aap"))
    }
}
