import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

/// The test card (`RouteDevice`, Sources/earshot-route-device) against a real PipeWire and
/// WirePlumber: its device publishes routes the way an ALSA card does, and availability changes
/// reach other clients (pw-dump reads them back from the server).
@Suite("Route device", .timeLimit(.minutes(2)), .blockingCalls)
struct RouteDeviceTests {
    static let sinkName = "alsa_output.pci-test.analog-stereo"

    @Test("an exported card shows its routes in pw-dump, and a jack's availability change reaches it")
    func routesAndAvailability() async throws {
        try await withSandbox(.init(wirePlumber: true)) { sandbox in
            let card = try await RouteDevice.start(in: sandbox, .init(
                deviceProperties: [
                    "device.name": "alsa_card.pci-test", "device.description": "Test Card", "device.bus": "pci",
                    "device.form-factor": "internal",
                ],
                routes: [.speaker(available: .yes), .headphones(available: .no)],
                nodes: [.sink(name: Self.sinkName, description: "Built-in Audio", device: 0, properties: ["priority.session": "1000"])]))
            defer { card.stop() }
            let sinkID = try #require(card.nodeIDs[Self.sinkName])

            var dump = try PwDump(sandbox)
            let device = try #require(dump.object(card.deviceID))
            #expect(device.type == "PipeWire:Interface:Device")
            #expect(device.props["device.name"] as? String == "alsa_card.pci-test")
            #expect(device.props["media.class"] as? String == "Audio/Device")
            #expect(device.availability("EnumRoute") == ["analog-output-speaker": "yes", "analog-output-headphones": "no"])
            #expect(device.routePortTypes() == ["analog-output-speaker": "speaker", "analog-output-headphones": "headphones"])
            #expect(device.param("Route").compactMap { $0["name"] as? String } == ["analog-output-speaker"])
            #expect(device.param("Route").first?["device"] as? Int == 0)
            #expect(device.param("Profile").first?["name"] as? String == "output:analog-stereo")
            let sink = try #require(dump.object(sinkID))
            #expect(sink.props["media.class"] as? String == "Audio/Sink")
            #expect(sink.props["device.id"] as? Int == Int(card.deviceID))
            #expect(sink.props["card.profile.device"] as? Int == 0)

            try await card.setAvailable(route: "analog-output-headphones", .yes)
            dump = try PwDump(sandbox)
            let after = try #require(dump.object(card.deviceID))
            #expect(after.availability("EnumRoute") == ["analog-output-speaker": "yes", "analog-output-headphones": "yes"])
        }
    }

    /// What Earshot's eligibility mirrors: WirePlumber (0.4.13 and 0.5.8 alike) leaves out a
    /// sink whose active route is `available: no` and returns to it when it comes back, while
    /// the configured default stays as the user set it.
    @Test("WirePlumber moves the default off a sink whose monitor is switched off, and back")
    func wirePlumberFollowsAvailability() async throws {
        try await withSandbox(.init(wirePlumber: true)) { sandbox in
            let speakers = Self.sinkName
            let hdmi = "alsa_output.pci-test.hdmi-stereo"
            let card = try await RouteDevice.start(in: sandbox, .init(
                deviceProperties: ["device.name": "alsa_card.pci-test", "device.bus": "pci"],
                routes: [.speaker(available: .yes, device: 0), .hdmi(available: .yes, device: 1)],
                nodes: [
                    .sink(name: speakers, description: "Speakers", device: 0, properties: ["priority.session": "1000"]),
                    .sink(name: hdmi, description: "HDMI", device: 1, properties: ["priority.session": "900"]),
                ]))
            defer { card.stop() }
            try await sandbox.observer.setMetadata(key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(hdmi)"}"#)
            _ = try await sandbox.observer.waitUntil("the HDMI sink is the default") { $0.effectiveDefaultSinkName == hdmi }

            try await card.setAvailable(route: "hdmi-output-0", .no)
            let off = try await sandbox.observer.waitUntil("WirePlumber leaves the switched-off monitor") {
                $0.effectiveDefaultSinkName == speakers
            }
            #expect(off.configuredDefaultSinkName == hdmi)

            try await card.setAvailable(route: "hdmi-output-0", .yes)
            _ = try await sandbox.observer.waitUntil("WirePlumber returns to the monitor") { $0.effectiveDefaultSinkName == hdmi }
        }
    }
}

/// One `pw-dump` of the sandbox, read with JSONSerialization (params are free-form).
private struct PwDump {
    struct Object {
        var json: [String: Any]
        var type: String? { json["type"] as? String }
        var info: [String: Any] { json["info"] as? [String: Any] ?? [:] }
        var props: [String: Any] { info["props"] as? [String: Any] ?? [:] }

        func param(_ id: String) -> [[String: Any]] {
            (info["params"] as? [String: Any])?[id] as? [[String: Any]] ?? []
        }

        /// Route name → availability of each route in `id` (EnumRoute or Route).
        func availability(_ id: String) -> [String: String] {
            Dictionary(param(id).compactMap { route in
                (route["name"] as? String).map { ($0, route["available"] as? String ?? "?") }
            }, uniquingKeysWith: { first, _ in first })
        }

        /// Route name → the `port.type` of its info (a flat [count, key, value, ...] array).
        func routePortTypes() -> [String: String] {
            Dictionary(param("EnumRoute").compactMap { route -> (String, String)? in
                guard let name = route["name"] as? String, let info = route["info"] as? [Any],
                    let index = info.firstIndex(where: { $0 as? String == "port.type" }), index + 1 < info.count,
                    let type = info[index + 1] as? String
                else { return nil }
                return (name, type)
            }, uniquingKeysWith: { first, _ in first })
        }
    }

    let objects: [Object]

    init(_ sandbox: PipeWireSandbox) throws {
        let result = try Shell.run(["pw-dump"], environment: sandbox.environment, timeout: .seconds(30))
        guard result.status == 0 else { throw FixtureError("pw-dump failed (\(result.status)): \(result.standardError)") }
        let parsed = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        objects = (parsed as? [[String: Any]] ?? []).map(Object.init)
    }

    func object(_ id: UInt32) -> Object? {
        objects.first { ($0.json["id"] as? Int) == Int(id) }
    }

}

extension RouteDeviceTests {
    /// Earshot's own PipeWire layer (the sandbox's observer is a `PipeWireConnection`) reads a
    /// device's routes, the node's `card.profile.device` and input ports, and follows a jack.
    @Test("Earshot's connection reads the card's routes and follows each availability change")
    func connectionFollowsRoutes() async throws {
        try await withSandbox(.init(wirePlumber: true)) { sandbox in
            let card = try await RouteDevice.start(in: sandbox, .init(
                deviceProperties: ["device.name": "alsa_card.pci-test", "device.bus": "pci"],
                routes: [.speaker(available: .yes), .headphones(available: .no)],
                nodes: [.sink(name: Self.sinkName, description: "Built-in Audio", device: 0)]))
            defer { card.stop() }
            let graph = try await sandbox.observer.waitUntil("the card's routes", timeout: .seconds(10)) { graph in
                graph.devices[card.deviceID]?.routes?.all.count == 2
            }
            let routes = try #require(graph.devices[card.deviceID]?.routes)
            #expect(routes.all.map(\.name) == ["analog-output-speaker", "analog-output-headphones"])
            #expect(routes.all.map(\.available) == [.yes, .no])
            #expect(routes.all.map(\.portType) == ["speaker", "headphones"])
            #expect(routes.all.allSatisfy { $0.devices == [0] && $0.direction == .output })
            #expect(routes.profile != nil)
            let sink = try #require(graph.node(named: Self.sinkName))
            #expect((sink.inputPorts ?? 0) > 0)
            let judged = try #require(graph.route(of: sink))
            #expect(judged.isAvailable && judged.active?.name == "analog-output-speaker" && judged.active?.label == "Speakers")

            try await card.setAvailable(route: "analog-output-headphones", .yes)
            _ = try await sandbox.observer.waitUntil("headphones plugged", timeout: .seconds(10)) { graph in
                graph.devices[card.deviceID]?.routes?.all.first { $0.name == "analog-output-headphones" }?.available == .yes
            }
            // WirePlumber switches the card to the port that came (as PulseAudio's
            // switch-on-port-available does); the active route follows.
            _ = try await sandbox.observer.waitUntil("the headphones active", timeout: .seconds(10)) { graph in
                graph.devices[card.deviceID]?.routes?.active.first { $0.device == 0 }?.name == "analog-output-headphones"
            }
            try await card.setAvailable(route: "analog-output-headphones", .no)
            let back = try await sandbox.observer.waitUntil("headphones unplugged, the speakers active", timeout: .seconds(10)) { graph in
                let routes = graph.devices[card.deviceID]?.routes
                return routes?.all.first { $0.name == "analog-output-headphones" }?.available == .no
                    && routes?.active.first { $0.device == 0 }?.name == "analog-output-speaker"
            }
            #expect(back.route(of: try #require(back.node(named: Self.sinkName)))?.isAvailable == true)
        }
    }
}
