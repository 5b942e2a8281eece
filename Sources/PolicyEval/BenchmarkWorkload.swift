import RoutingPolicy
import AudioGraph

/// A generated graph and event script for `scripts/bench eval`: many sinks, a fifth of them
/// Bluetooth accessories, and a deterministic mix of placement and source updates, hand
/// selections, sinks leaving and arriving, and the timers that follow.
public struct BenchmarkWorkload: Sendable {
    public var graph: Graph
    public var config: PolicyConfig
    public var hostAddresses: [BluetoothAddress]
    public var inputs: [TimedInput]

    /// - Parameters:
    ///   - noise: port and link events (as a stream being relinked makes) after each other
    ///     input; they count as events. None by default.
    ///   - captureStreams: capture streams recording throughout, every other one a call (§8),
    ///     with a laptop microphone and each Bluetooth accessory's A2DP-time input
    ///     (`bluez5.loopback`): every decision then routes calls. None by default.
    public init(sinks sinkCount: Int, events eventCount: Int, noise: Int = 0, captureStreams: Int = 0, seed: UInt64 = 0x5eed) {
        var random = SplitMix64(seed: seed)
        var graph = Graph()
        var accessories: [AccessoryIdentity] = []
        var nodes: [Node] = []
        for index in 0..<sinkCount {
            let id = ObjectID(100 + index)
            var props: Properties = ["media.class": "Audio/Sink", "object.serial": String(10_000 + index)]
            switch index % 10 {
            case 0, 1:
                let address = BluetoothAddress(bytes: [0x10, 0x20, UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF), 0x01])
                props["node.name"] = "bluez_output.\(address.description.replacingColons).1"
                props["api.bluez5.address"] = address.description
                props["device.bus"] = "bluetooth"
                props["device.form-factor"] = index % 20 == 0 ? "headset" : "headphone"
                accessories.append(.address(address))
            case 2: props["node.name"] = "alsa_output.pci-\(index).hdmi-stereo"; props["device.profile.name"] = "hdmi-stereo"; props["device.bus"] = "pci"
            case 3, 4: props["node.name"] = "alsa_output.pci-\(index).analog-stereo"; props["device.form-factor"] = "internal"; props["device.bus"] = "pci"
            case 5, 6: props["node.name"] = "alsa_output.usb-dac-\(index).analog-stereo"; props["device.bus"] = "usb"
            default: props["node.name"] = "virtual_sink_\(index)"
            }
            let node = Node(id: id, state: .suspended, props: props)
            nodes.append(node)
            graph.apply(.node(node))
        }
        if captureStreams > 0 {
            graph.apply(.node(Node(id: 90, state: .suspended, props: [
                "media.class": "Audio/Source", "node.name": "alsa_input.pci-bench.analog-stereo", "device.form-factor": "internal",
                "device.bus": "pci", "object.serial": "9000",
            ])))
            for (index, identity) in accessories.enumerated() {
                guard case .address(let address) = identity else { continue }
                graph.apply(.node(Node(id: ObjectID(500_000 + index), state: .suspended, props: [
                    "media.class": "Audio/Source", "node.name": "bluez_input.\(address.description)", "api.bluez5.address": address.description,
                    "bluez5.loopback": "true", "device.form-factor": "headset", "object.serial": String(500_000 + index),
                ])))
            }
            for index in 0..<captureStreams {
                let props: Properties = index % 2 == 0
                    ? ["application.name": "WEBRTC VoiceEngine", "media.role": "Communication"] : ["application.name": "pw-record", "media.role": "Music"]
                var all = props
                all["media.class"] = "Stream/Input/Audio"
                all["node.name"] = "capture-\(index)"
                all["object.serial"] = String(600_000 + index)
                graph.apply(.node(Node(id: ObjectID(600_000 + index), state: .running, props: all, inputPorts: 1, outputPorts: 0)))
            }
        }
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        metadata.set(subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(nodes[3].name ?? "")"}"#)
        graph.apply(.metadata(metadata))

        var config = PolicyConfig()
        config.rules = [
            NodeRule(matches: [PropertyMatch(key: "node.name", glob: Glob("virtual_sink_*7"))], action: .ignore),
            NodeRule(matches: [PropertyMatch(key: "device.bus", glob: Glob("usb"))], action: .priority(5)),
        ]
        let host = BluetoothAddress(bytes: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        let otherHost = BluetoothAddress(bytes: [0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC])

        var inputs: [TimedInput] = []
        var now: Milliseconds = 0
        for identity in accessories where inputs.count < eventCount {
            let configuration = AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .offHead, primarySource: host)
            inputs.append(TimedInput(at: now, .accessory(.register(identity, reporter: "org.example.bench", configuration))))
        }
        let placements: [Placement] = [.onHead, .inEar, .offHead, .offHead, .overTheEar]
        var removed: [Node] = []
        while inputs.count < eventCount {
            now += Milliseconds(random.next(below: 40))
            let roll = random.next(below: 100)
            let input: PolicyInput
            if roll < 55, !accessories.isEmpty {
                let identity = accessories[random.next(below: accessories.count)]
                input = .accessory(.update(identity, AccessoryUpdate(placement: .set(placements[random.next(below: placements.count)]))))
            } else if roll < 70, !accessories.isEmpty {
                let identity = accessories[random.next(below: accessories.count)]
                input = .accessory(.update(identity, AccessoryUpdate(primarySource: .set(random.next(below: 4) == 0 ? otherHost : host))))
            } else if roll < 80 {
                input = .userSelectedDefault(nodes[random.next(below: nodes.count)].name ?? "")
            } else if roll < 90, let back = removed.popLast() {
                input = .graphChanged(.node(back))
            } else {
                let node = nodes[random.next(below: nodes.count)]
                if removed.contains(where: { $0.id == node.id }) { continue }
                removed.append(node)
                input = .graphChanged(.removed(node.id))
            }
            inputs.append(TimedInput(at: now, input))
            for index in 0..<noise where inputs.count < eventCount {
                let id = ObjectID(1_000_000 + inputs.count)
                let change: GraphChange = index % 2 == 0
                    ? .port(Port(id: id, direction: .input, props: ["node.id": "\(nodes[index % nodes.count].id)", "audio.channel": "FL"]))
                    : .link(Link(id: id, outputNode: 99, outputPort: id - 1, inputNode: nodes[index % nodes.count].id, inputPort: id - 1))
                inputs.append(TimedInput(at: now, .graphChanged(change)))
            }
        }
        self.graph = graph
        self.config = config
        self.hostAddresses = [host]
        self.inputs = inputs
    }
}

extension String {
    fileprivate var replacingColons: String { String(map { $0 == ":" ? "_" : $0 }) }
}
