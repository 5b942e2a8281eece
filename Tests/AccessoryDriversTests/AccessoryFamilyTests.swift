import Testing
@testable import AccessoryDrivers

struct AccessoryFamilyTests {
    static let audioSink = "0000110b-0000-1000-8000-00805f9b34fb"
    static let handsFree = "0000111e-0000-1000-8000-00805f9b34fb"
    static let hid = "00001124-0000-1000-8000-00805f9b34fb"

    @Test func airPods() {
        let uuids = [Self.audioSink, Self.handsFree, "74EC2172-0BAD-4D01-8F77-997B2BE0722A"]
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v004Cp2014d0E60", uuids: uuids, name: "AirPods Pro") == .aap)
        #expect(AccessoryFamily.aap.rfcommServiceUUID == nil)
    }

    @Test func beatsAndReversedUUID() {
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v004Cp2011d0100", uuids: [Self.audioSink, "2a72e02b-7b99-778f-014d-ad0b7221ec74"], name: "Beats Studio Buds") == .aap)
        #expect(AccessoryFamily.identify(modalias: nil, uuids: ["74ec2172-0bad-4d01-8f77-997b2be0722a"], name: nil) == .aap)
    }

    @Test func appleKeyboardIsNotAnAccessory() {
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v004Cp0267d0001", uuids: [Self.hid], name: "Magic Keyboard") == nil)
    }

    @Test func galaxyBudsGenerations() {
        #expect(AccessoryFamily.identify(modalias: nil, uuids: [Self.audioSink, "00001102-0000-1000-8000-00805f9b34fd"], name: "Galaxy Buds (A1B2)") == .galaxyBuds(.firstGeneration))
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v0075pA013d0001", uuids: [Self.audioSink, "00001101-0000-1000-8000-00805F9B34FB"], name: "Galaxy Buds+ (C3D4)") == .galaxyBuds(.plusLiveOrPro))
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v0075pA013d0001", uuids: ["00001101-0000-1000-8000-00805f9b34fb"], name: "My Buds") == .galaxyBuds(.plusLiveOrPro))
        #expect(AccessoryFamily.identify(modalias: nil, uuids: [Self.audioSink, "2e73a4ad-332d-41fc-90e2-16bef06523f2", "00001101-0000-1000-8000-00805f9b34fb"], name: "Buds3 Pro") == .galaxyBuds(.secondGenerationOrLater))
    }

    @Test func rfcommServiceToConnect() {
        #expect(AccessoryFamily.galaxyBuds(.firstGeneration).rfcommServiceUUID == "00001102-0000-1000-8000-00805f9b34fd")
        #expect(AccessoryFamily.galaxyBuds(.plusLiveOrPro).rfcommServiceUUID == "00001101-0000-1000-8000-00805f9b34fb")
        #expect(AccessoryFamily.galaxyBuds(.secondGenerationOrLater).rfcommServiceUUID == "2e73a4ad-332d-41fc-90e2-16bef06523f2")
        #expect(GalaxyBudsModel.firstGeneration.framing == .legacy)
        #expect(GalaxyBudsModel.plusLiveOrPro.framing.startMarker == 0xFD)
        #expect(GalaxyBudsModel.firstGeneration.framing.endMarker == 0xEE)
    }

    @Test func unrelatedDevices() {
        // A Samsung phone offering the plain Serial Port Profile is not a headset.
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v0075p0100d0200", uuids: ["00001101-0000-1000-8000-00805f9b34fb"], name: "Galaxy S23") == nil)
        // A serial adapter whose name happens to mention buds, from another vendor.
        #expect(AccessoryFamily.identify(modalias: "usb:v1D6Bp0246d0540", uuids: ["00001101-0000-1000-8000-00805f9b34fb"], name: "Buds adapter") == nil)
        #expect(AccessoryFamily.identify(modalias: "bluetooth:v00E0p1234d0001", uuids: [Self.audioSink, Self.handsFree], name: "Pixel Buds Pro") == nil)
        #expect(AccessoryFamily.identify(modalias: nil, uuids: [], name: nil) == nil)
        #expect(AccessoryFamily.identify(modalias: "garbage", uuids: [Self.hid], name: "") == nil)
    }

    @Test func modaliasParsing() {
        let apple = BluetoothModalias("bluetooth:v004Cp2014d0E60")
        #expect(apple?.isApple == true)
        #expect(apple?.product == 0x2014)
        #expect(BluetoothModalias("usb:v04E8p1234d0001")?.isSamsung == true)
        #expect(BluetoothModalias("bluetooth:v00") == nil)
        #expect(BluetoothModalias("pci:v004Cp2014d0E60") == nil)
    }
}
