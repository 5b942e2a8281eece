import AudioGraph
import Testing

/// A device's routes as the policy and the recordings read them (issue 19).
@Suite("device routes")
struct RoutesTests {
    static let laptop = DeviceRoutes(
        all: [
            DeviceRoute(index: 0, direction: .output, name: "speaker", description: "Speakers", priority: 100, portType: "speaker", devices: [0], profiles: [1]),
            DeviceRoute(index: 1, direction: .output, name: "headphones", description: "Headphones", priority: 200, available: .yes, portType: "headphones", devices: [0], profiles: [1]),
        ],
        active: [DeviceRoute(index: 1, direction: .output, name: "headphones", description: "Headphones", priority: 200, available: .yes, devices: [0], device: 0, profile: 1)],
        profile: 1)

    @Test("a jack and the port switch read at once are recorded jack first")
    func changesPutAvailabilityFirst() throws {
        let unplugged = try #require(Self.laptop.setting("headphones", available: .no)?.setting("speaker", available: .unknown, activate: true))
        let changes = Self.laptop.changes(to: unplugged).map { "\($0.name) \($0.available.rawValue) \($0.active)" }
        #expect(changes == ["headphones no false", "speaker unknown true"])
        #expect(unplugged.active.map(\.name) == ["speaker"])
        #expect(Self.laptop.setting("nope", available: .no) == nil)
    }

    @Test("a node is judged by all its routes: the active one unplugged does not make it unavailable while another is plugged")
    func judgement() throws {
        var graph = Graph()
        graph.apply(.device(Device(id: 5, props: [:], routes: Self.laptop.setting("headphones", available: .no))))
        let node = Node(id: 6, props: ["node.name": "s", "media.class": "Audio/Sink", "device.id": "5", "card.profile.device": "0"])
        graph.apply(.node(node))
        let judged = try #require(graph.route(of: node))
        #expect(judged.isAvailable && judged.active?.name == "headphones" && judged.active?.available == .no)
        var allOut = graph.devices[5]!
        allOut.routes = allOut.routes?.setting("speaker", available: .no)
        graph.apply(.device(allOut))
        #expect(graph.route(of: node)?.isAvailable == false)
        // Another profile device's routes say nothing about this node.
        let other = Node(id: 7, props: ["node.name": "t", "media.class": "Audio/Sink", "device.id": "5", "card.profile.device": "3"])
        #expect(graph.route(of: other) == nil)
    }
}

extension RoutesTests {
    @Test("earshot graph shows each sink's port, and whether it is unplugged; a port of another profile is not the sink's")
    func routingViewAndProfiles() throws {
        var graph = Graph()
        var routes = Self.laptop
        routes.all.append(DeviceRoute(index: 2, direction: .output, name: "hdmi", description: "HDMI", available: .no, portType: "hdmi", devices: [0], profiles: [2]))
        graph.apply(.device(Device(id: 5, props: ["device.name": "card"], routes: routes)))
        let node = Node(id: 6, props: ["node.name": "s", "media.class": "Audio/Sink", "device.id": "5", "card.profile.device": "0"], inputPorts: 2)
        graph.apply(.node(node))
        #expect(routes.candidates(for: 0, direction: .output).map(\.name) == ["speaker", "headphones"], "profile 2's HDMI is not a candidate in profile 1")
        let sink = try #require(RoutingView(graph).sinks.first)
        #expect(sink.port == "Headphones" && sink.portType == "headphones" && sink.available == true && sink.inputPorts == 2)
        #expect(RoutingView(graph).renderText().contains("port \"Headphones\""))
        var unplugged = graph.devices[5]!
        unplugged.routes = try #require(routes.setting("headphones", available: .no)?.setting("speaker", available: .no))
        graph.apply(.device(unplugged))
        let out = try #require(RoutingView(graph).sinks.first)
        #expect(out.available == false)
        #expect(RoutingView(graph).renderText().contains("port \"Headphones\" unplugged"))
    }
}
