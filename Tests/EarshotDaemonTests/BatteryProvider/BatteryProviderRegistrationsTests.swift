import AccessoryDrivers
@testable import EarshotDaemon
import RoutingPolicy
import Testing

/// When Earshot registers with an adapter's BatteryProviderManager1 again, and which of
/// BlueZ's answers still count, without a bus.
@Suite("Battery provider: registrations")
struct BatteryProviderRegistrationsTests {
    typealias B = BlueZBodies
    static let buds = BluetoothAddress("AA:BB:CC:DD:EE:01")!

    /// The adapters the next step registers with, for the buds on hci0 with a level.
    static func toRegister(_ registrations: BatteryProviderRegistrations) -> [String] {
        let headset = BatteryProviderPlan.Headset(
            address: buds, devicePath: B.devicePath("AA:BB:CC:DD:EE:01"), adapterPath: B.hci0, percentage: 40)
        return BatteryProviderPlan(enabled: true, headsets: [headset], registrations: registrations.states, otherProviders: []).adaptersToRegister
    }

    /// What the service does with each of the view's changes.
    static func take(_ change: BlueZBatteryView.Change, _ registrations: inout BatteryProviderRegistrations) {
        switch change {
        case .managerAppeared(let adapter): registrations.managerAppeared(adapter)
        case .managerGone(let adapter): registrations.managerGone(adapter)
        case .ownerChanged: registrations.forgetAll()
        case .nothing, .changed: break
        }
    }

    @Test("An adapter BlueZ removes and adds again is registered again")
    func adapterRemovedAndAdded() {
        var view = BlueZBatteryView()
        var registrations = BatteryProviderRegistrations()
        view.read(managedObjects: B.managedObjects([(B.hci0, BlueZBatteryViewTests.adapter(manager: true))]))
        #expect(Self.toRegister(registrations) == [B.hci0])
        let attempt = registrations.begin(B.hci0)
        #expect(Self.toRegister(registrations).isEmpty)
        let firstTaken = registrations.answered(B.hci0, attempt: attempt, .registered)
        #expect(firstTaken)
        #expect(registrations.registered == [B.hci0])

        Self.take(view.handle(B.removed(B.hci0)), &registrations)
        #expect(registrations.registered.isEmpty)
        Self.take(view.handle(B.added(B.hci0, BlueZBatteryViewTests.adapter(manager: true))), &registrations)
        #expect(Self.toRegister(registrations) == [B.hci0])
    }

    @Test("The manager appearing clears registered and unavailable, never a call in flight")
    func managerAppeared() {
        var registrations = BatteryProviderRegistrations()
        registrations.unavailable(B.hci0)
        registrations.managerAppeared(B.hci0)
        #expect(registrations.states.isEmpty)
        let first = registrations.begin(B.hci0)
        _ = registrations.answered(B.hci0, attempt: first, .registered)
        #expect(registrations.registered == [B.hci0])
        registrations.managerAppeared(B.hci0)
        #expect(registrations.states.isEmpty)
        let attempt = registrations.begin(B.hci0)
        registrations.managerAppeared(B.hci0)
        #expect(registrations.states == [B.hci0: .pending])
        let inFlightTaken = registrations.answered(B.hci0, attempt: attempt, .registered)
        #expect(inFlightTaken)
    }

    @Test("Stale answers: to a call before BlueZ restarted or before the adapter went and came back")
    func staleAnswers() {
        var registrations = BatteryProviderRegistrations()
        let beforeRestart = registrations.begin(B.hci0)
        registrations.forgetAll()
        let takenAfterRestart = registrations.answered(B.hci0, attempt: beforeRestart, .registered)
        #expect(!takenAfterRestart)
        #expect(registrations.states.isEmpty)

        let beforeRemoval = registrations.begin(B.hci0)
        registrations.managerGone(B.hci0)
        let current = registrations.begin(B.hci0)
        let takenAfterRemoval = registrations.answered(B.hci0, attempt: beforeRemoval, .unavailable)
        #expect(!takenAfterRemoval)
        #expect(registrations.states == [B.hci0: .pending])
        let currentTaken = registrations.answered(B.hci0, attempt: current, .registered)
        #expect(currentTaken)
        let secondAnswerTaken = registrations.answered(B.hci0, attempt: current, .unavailable)
        #expect(!secondAnswerTaken)
        #expect(registrations.states == [B.hci0: .registered])
    }
}
