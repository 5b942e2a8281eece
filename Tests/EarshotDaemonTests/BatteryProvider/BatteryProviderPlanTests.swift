import AccessoryDrivers
@testable import EarshotDaemon
import RoutingPolicy
import Testing

/// Which number the desktop sees, which children Earshot offers BlueZ and what each
/// headset's `desktop-battery` says, without a bus.
@Suite("Battery provider: the plan")
struct BatteryProviderPlanTests {
    typealias Plan = BatteryProviderPlan
    static let buds = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let headphones = BluetoothAddress("AA:BB:CC:DD:EE:02")!
    static let hci0 = "/org/bluez/hci0"

    static func headset(_ address: BluetoothAddress, _ percentage: UInt8?, adapter: String = hci0) -> Plan.Headset {
        Plan.Headset(
            address: address, devicePath: adapter + "/dev_" + address.description.replacing(":", with: "_"), adapterPath: adapter,
            percentage: percentage)
    }

    static func level(_ percent: Int) -> BatteryLevel { BatteryLevel(percent: percent, isCharging: nil) }

    @Test("Earbuds: the lowest bud that reports; the case never counts; headphones their own; nothing valid → none")
    func oneNumber() {
        typealias L = DesktopBatteryLevel
        #expect(L.percentage(of: BatteryReport(left: Self.level(80), right: Self.level(35), chargingCase: Self.level(5))) == 35)
        #expect(L.percentage(of: BatteryReport(right: Self.level(60), chargingCase: Self.level(10))) == 60)
        #expect(L.percentage(of: BatteryReport(chargingCase: Self.level(10))) == nil)
        #expect(L.percentage(of: BatteryReport(headset: Self.level(70))) == 70)
        #expect(L.percentage(of: BatteryReport(left: Self.level(101), right: Self.level(-1), headset: Self.level(40))) == 40)
        #expect(L.percentage(of: BatteryReport(left: Self.level(250))) == nil)
        #expect(L.percentage(of: nil) == nil)
        #expect(L.percentage(of: BatteryReport(left: Self.level(0), right: Self.level(100))) == 0)
    }

    @Test("Registered: a child per headset with a level, named as BlueZ names devices; state provided")
    func provided() {
        let plan = Plan(
            enabled: true, headsets: [Self.headset(Self.buds, 40), Self.headset(Self.headphones, nil)], registrations: [Self.hci0: .registered],
            otherProviders: [])
        #expect(plan.children == ["/org/earshot/battery/dev_AA_BB_CC_DD_EE_01": .init(devicePath: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01", percentage: 40)])
        #expect(plan.states == [Self.buds: .provided])
        #expect(plan.adaptersToRegister.isEmpty)
    }

    @Test("Not yet registered: register on each adapter with children, once; no state until it answers")
    func registering() {
        let headsets = [Self.headset(Self.buds, 40), Self.headset(Self.headphones, 90, adapter: "/org/bluez/hci1")]
        let first = Plan(enabled: true, headsets: headsets, registrations: [:], otherProviders: [])
        #expect(first.adaptersToRegister == ["/org/bluez/hci0", "/org/bluez/hci1"])
        #expect(first.states.isEmpty)
        let pending = Plan(enabled: true, headsets: headsets, registrations: [Self.hci0: .pending, "/org/bluez/hci1": .unavailable], otherProviders: [])
        #expect(pending.adaptersToRegister.isEmpty)
        #expect(pending.states == [Self.headphones: .noProviderManager])
        // A headset with no level yet asks nothing of BlueZ.
        #expect(Plan(enabled: true, headsets: [Self.headset(Self.buds, nil)], registrations: [:], otherProviders: []).adaptersToRegister.isEmpty)
    }

    @Test("Another provider first: no child (BlueZ would ignore it), state provided-by-other; gone → the child comes")
    func otherFirst() {
        let budsPath = Self.headset(Self.buds, 40).devicePath
        let other = Plan(enabled: true, headsets: [Self.headset(Self.buds, 40)], registrations: [Self.hci0: .registered], otherProviders: [budsPath])
        #expect(other.children.isEmpty)
        #expect(other.states == [Self.buds: .providedByOther])
        let gone = Plan(enabled: true, headsets: [Self.headset(Self.buds, 40)], registrations: [Self.hci0: .registered], otherProviders: [])
        #expect(gone.children.count == 1)
    }

    @Test("battery-to-desktop = false: no child, no registration, every headset off")
    func off() {
        let plan = Plan(
            enabled: false, headsets: [Self.headset(Self.buds, 40), Self.headset(Self.headphones, nil)], registrations: [:], otherProviders: [])
        #expect(plan.children.isEmpty)
        #expect(plan.adaptersToRegister.isEmpty)
        #expect(plan.states == [Self.buds: .off, Self.headphones: .off])
    }

    @Test("The wire names of the states are the issue's four")
    func stateNames() {
        #expect([DesktopBatteryState.provided, .noProviderManager, .providedByOther, .off].map(\.rawValue)
            == ["provided", "no-provider-manager", "provided-by-other", "off"])
    }

    @Test("A device path's adapter is its parent path")
    func adapterOfDevice() {
        #expect(BatteryProviderService.adapterPath(of: "/org/bluez/hci1/dev_AA_BB_CC_DD_EE_FF") == "/org/bluez/hci1")
        #expect(BatteryProviderService.adapterPath(of: "/dev") == "/dev")
    }
}
