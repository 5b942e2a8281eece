/// A null audio sink with the properties a real device would carry, created in a sandbox
/// with `pw-cli create-node adapter`.
public struct VirtualSink: Sendable, Hashable {
    public var name: String
    public var description: String
    public var formFactor: String?
    public var bus: String?
    public var bluetoothAddress: String?
    public var channels: [String]
    public var extraProperties: [String: String]

    public init(
        name: String, description: String, formFactor: String? = nil, bus: String? = nil,
        bluetoothAddress: String? = nil, channels: [String] = ["FL", "FR"], extraProperties: [String: String] = [:]
    ) {
        self.name = name
        self.description = description
        self.formFactor = formFactor
        self.bus = bus
        self.bluetoothAddress = bluetoothAddress
        self.channels = channels
        self.extraProperties = extraProperties
    }

    public static func headphones(
        name: String = "bluez_output.AA_BB_CC_DD_EE_FF.1", address: String = "AA:BB:CC:DD:EE:FF",
        description: String = "Sandbox Headphones"
    ) -> VirtualSink {
        VirtualSink(name: name, description: description, formFactor: "headphone", bus: "bluetooth", bluetoothAddress: address)
    }

    public static func speakers(name: String = "alsa_output.sandbox.analog-stereo", description: String = "Sandbox Speakers") -> VirtualSink {
        VirtualSink(name: name, description: description, formFactor: "internal", bus: "pci")
    }

    /// The SPA-JSON object `pw-cli create-node adapter` takes. Without a session manager
    /// nobody configures the adapter's ports, so `autoPortConfig` asks the adapter to.
    public func adapterArguments(autoPortConfig: Bool) -> String {
        NullNode.arguments(
            name: name, description: description, mediaClass: "Audio/Sink", formFactor: formFactor, bus: bus,
            bluetoothAddress: bluetoothAddress, channels: channels, extraProperties: extraProperties, autoPortConfig: autoPortConfig)
    }
}

/// PipeWire's null audio node (`support.null-audio-sink`) as a sink or source stand-in.
enum NullNode {
    /// The SPA-JSON object `pw-cli create-node adapter` takes. Without a session manager
    /// nobody configures the adapter's ports, so `autoPortConfig` asks the adapter to.
    static func arguments(
        name: String, description: String, mediaClass: String, formFactor: String?, bus: String?, bluetoothAddress: String?,
        channels: [String], extraProperties: [String: String], autoPortConfig: Bool
    ) -> String {
        var props: [(String, String)] = [
            ("factory.name", "support.null-audio-sink"), ("node.name", name), ("node.description", description),
            ("media.class", mediaClass), ("object.linger", "true"), ("audio.position", "[\(channels.joined(separator: ","))]"),
        ]
        if let formFactor { props.append(("device.form-factor", formFactor)) }
        if let bus { props.append(("device.bus", bus)) }
        if let bluetoothAddress { props.append(("api.bluez5.address", bluetoothAddress)) }
        if autoPortConfig {
            props.append(("adapter.auto-port-config", "{ mode=dsp monitor=true position=preserve }"))
            // PipeWire 1.4 makes the DSP ports only with both a format and a rate (either
            // alone gives one `playback_1` port and no monitors); 0.3.65 takes them as given.
            props += [("audio.format", "F32P"), ("audio.rate", "48000")]
        }
        props += extraProperties.sorted { $0.key < $1.key }
        let body = props.map { key, value in
            value.hasPrefix("[") || value.hasPrefix("{") ? "\(key)=\(value)" : "\(key)=\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\""
        }
        return "{ \(body.joined(separator: " ")) }"
    }
}
