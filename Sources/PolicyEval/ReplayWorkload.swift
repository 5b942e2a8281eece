import RoutingPolicy
import AudioGraph

/// A day at a desk as files, for `scripts/bench replay`: a pw-dump of `sinks` sinks (a fifth
/// Bluetooth accessories, the rest HDMI, internal and USB DACs; each accessory and internal card
/// with its microphone) and a seeded event script of
/// `events` lines over 24 hours: mostly placement changes, some registrations ending and
/// starting again, hand selections, and a few sinks unplugged and plugged back. Built as JSON
/// values so `earshot eval` reads it exactly as a user's saved dump and script.
public struct ReplayWorkload: Sendable {
    public static let day: Milliseconds = 24 * 60 * 60 * 1000
    public static let host = "11:22:33:44:55:66"

    /// The pw-dump: one JSON array.
    public var graph: JSONValue
    /// The script, one JSON object per line.
    public var script: [JSONValue]

    public init(sinks sinkCount: Int = 50, events eventCount: Int = 10_000, seed: UInt64 = 0x5eed_da7) {
        var random = SplitMix64(seed: seed)
        var nodes: [JSONValue] = []
        var accessories: [String] = []
        for index in 0..<sinkCount {
            let id = Int64(100 + index)
            var props: [String: JSONValue] = ["media.class": .string("Audio/Sink"), "object.serial": .integer(10_000 + id)]
            switch index % 10 {
            case 0, 1:
                let address = "10:20:30:40:\(Self.hex(index >> 8)):\(Self.hex(index))"
                props["node.name"] = .string("bluez_output.\(address.split(separator: ":").joined(separator: "_")).1")
                props["api.bluez5.address"] = .string(address)
                props["device.bus"] = .string("bluetooth")
                props["device.form-factor"] = .string(index % 20 == 0 ? "headset" : "headphone")
                accessories.append(address)
            case 2: props["node.name"] = .string("alsa_output.pci-\(index).hdmi-stereo"); props["device.profile.name"] = .string("hdmi-stereo"); props["device.bus"] = .string("pci")
            case 3, 4, 8, 9: props["node.name"] = .string("alsa_output.pci-\(index).analog-stereo"); props["device.form-factor"] = .string("internal"); props["device.bus"] = .string("pci")
            default: props["node.name"] = .string("alsa_output.usb-dac-\(index).analog-stereo"); props["device.bus"] = .string("usb")
            }
            nodes.append(.object([
                "id": .integer(id), "type": .string("PipeWire:Interface:Node"), "version": .integer(3),
                "info": .object(["state": .string("suspended"), "props": .object(props)]),
            ]))
        }
        let names = nodes.map { node -> String in
            if case .string(let name)? = node["info"]?["props"]?["node.name"] { return name }
            return ""
        }
        // Microphones (docs/policy.md §8): each Bluetooth accessory's and each internal card's,
        // so every decision ranks the input too.
        for (offset, name) in names.enumerated() {
            var props: [String: JSONValue] = ["media.class": .string("Audio/Source"), "object.serial": .integer(20_000 + Int64(offset))]
            if name.hasPrefix("bluez_output.") {
                let address = accessories[offset / 10 * 2 + offset % 10]
                props["node.name"] = .string("bluez_input." + name.dropFirst("bluez_output.".count).dropLast(2) + ".0")
                props["api.bluez5.address"] = .string(address)
                props["device.bus"] = .string("bluetooth")
                props["device.form-factor"] = .string("headset")
            } else if name.hasSuffix(".analog-stereo"), name.hasPrefix("alsa_output.pci-") {
                props["node.name"] = .string(name.replacing("alsa_output.", with: "alsa_input."))
                props["device.form-factor"] = .string("internal")
                props["device.bus"] = .string("pci")
            } else {
                continue
            }
            nodes.append(.object([
                "id": .integer(Int64(100 + sinkCount + offset)), "type": .string("PipeWire:Interface:Node"), "version": .integer(3),
                "info": .object(["state": .string("suspended"), "props": .object(props)]),
            ]))
        }
        let metadata: JSONValue = .object([
            "id": .integer(30), "type": .string("PipeWire:Interface:Metadata"), "version": .integer(3),
            "props": .object(["metadata.name": .string("default")]),
            "metadata": .array([.object([
                "subject": .integer(0), "key": .string("default.configured.audio.sink"), "type": .string("Spa:String:JSON"),
                "value": .object(["name": .string(names[min(3, names.count - 1)])]),
            ])]),
        ])
        graph = .array(nodes + [metadata])

        var script: [JSONValue] = []
        func line(_ at: Milliseconds, _ verb: String, _ body: [String: JSONValue]) {
            script.append(.object(["at": .integer(Int64(at)), verb: .object(body)]))
        }
        func register(_ address: String, at: Milliseconds) {
            line(at, "register", [
                "accessory": .string(address), "reporter": .string("org.example.bench"),
                "capabilities": .array([.string("audio-switching"), .string("placement")]),
                "placement": .string("off-head"), "primary-source": .string(Self.host),
            ])
        }
        // Drawn from sorted: a Set's order changes from process to process, the seed must not.
        var registered = Set<String>()
        for address in accessories where script.count < eventCount {
            register(address, at: 0)
            registered.insert(address)
        }
        // Sinks that may be unplugged: never the Bluetooth ones, whose accessories come and go
        // by registration instead.
        let pluggable = names.indices.filter { !names[$0].hasPrefix("bluez_") }
        var unplugged: [Int] = []
        let placements = ["on-head", "off-head", "in-ear", "off-head", "over-the-ear"]
        let remaining = max(1, eventCount - script.count)
        let meanGap = Int(Self.day) / remaining
        var now: Milliseconds = 0
        while script.count < eventCount {
            now = min(Self.day, now + Milliseconds(random.next(below: 2 * meanGap + 1)))
            let roll = random.next(below: 100)
            if roll < 70, !accessories.isEmpty {
                let address = accessories[random.next(below: accessories.count)]
                if registered.contains(address) {
                    line(now, "update", ["accessory": .string(address), "placement": .string(placements[random.next(below: placements.count)])])
                } else {
                    register(address, at: now)
                    registered.insert(address)
                }
            } else if roll < 76, let address = registered.sorted().randomElement(using: &random) {
                line(now, "unregister", ["accessory": .string(address)])
                registered.remove(address)
            } else if roll < 90 {
                let present = names.indices.filter { !unplugged.contains($0) }
                line(now, "select", ["node": .string(names[present[random.next(below: present.count)]])])
            } else if roll < 95, unplugged.count < 3, let index = pluggable.filter({ !unplugged.contains($0) }).randomElement(using: &random) {
                line(now, "remove", ["node": .string(names[index])])
                unplugged.append(index)
            } else if let index = unplugged.popLast() {
                line(now, "add", nodes[index].objectFields ?? [:])
            }
        }
        self.script = script
    }

    private static func hex(_ value: Int) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[value >> 4 & 0xF], digits[value & 0xF]])
    }
}

extension JSONValue {
    fileprivate var objectFields: [String: JSONValue]? {
        if case .object(let fields) = self { return fields }
        return nil
    }
}
