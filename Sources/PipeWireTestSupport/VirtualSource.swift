import AudioGraph
import Foundation

/// A microphone stand-in: a null audio node of class `Audio/Source/Virtual` with the
/// properties a real device would carry (docs/policy.md §8), created with `pw-cli create-node
/// adapter`. PipeWire's null node makes a usable source only as `Audio/Source/Virtual` (its
/// `capture_*` ports are the monitor of its inputs); as `Audio/Source` it gets one odd port.
/// Earshot takes such a source at its word when it states a form factor, bus or address.
public struct VirtualSource: Sendable, Hashable {
    public var name: String
    public var description: String
    public var formFactor: String?
    public var bus: String?
    public var bluetoothAddress: String?
    public var channels: [String]
    public var extraProperties: [String: String]

    public init(
        name: String, description: String, formFactor: String? = nil, bus: String? = nil, bluetoothAddress: String? = nil,
        channels: [String] = ["FL", "FR"], extraProperties: [String: String] = [:]
    ) {
        self.name = name
        self.description = description
        self.formFactor = formFactor
        self.bus = bus
        self.bluetoothAddress = bluetoothAddress
        self.channels = channels
        self.extraProperties = extraProperties
    }

    /// The headset's microphone: the same address as `VirtualSink.headphones()`.
    public static func headsetMicrophone(
        name: String = "bluez_input.AA_BB_CC_DD_EE_FF.0", address: String = "AA:BB:CC:DD:EE:FF", description: String = "Sandbox Headset Microphone"
    ) -> VirtualSource {
        VirtualSource(
            name: name, description: description, formFactor: "headset", bus: "bluetooth", bluetoothAddress: address,
            extraProperties: ["priority.session": "1000"])
    }

    /// The laptop's own microphone, ranked first by the session manager's own order.
    public static func internalMicrophone(name: String = "alsa_input.sandbox.analog-stereo", description: String = "Sandbox Microphone") -> VirtualSource {
        VirtualSource(name: name, description: description, formFactor: "internal", bus: "pci", extraProperties: ["priority.session": "2000"])
    }

    public func adapterArguments(autoPortConfig: Bool) -> String {
        NullNode.arguments(
            name: name, description: description, mediaClass: "Audio/Source/Virtual", formFactor: formFactor, bus: bus,
            bluetoothAddress: bluetoothAddress, channels: channels, extraProperties: extraProperties, autoPortConfig: autoPortConfig)
    }
}

extension PipeWireSandbox {
    /// Creates a source and waits until the observer sees it with its output ports.
    @discardableResult
    public func createSource(_ source: VirtualSource) async throws -> Node {
        try await createNullNode(
            source.adapterArguments(autoPortConfig: !hasWirePlumber), name: source.name, ports: .output, count: source.channels.count)
    }

    /// Starts `pw-record` (8 kHz mono into a file of the sandbox: a real capture stream that
    /// follows the default source, or, with `target`, is pinned to a node) and waits for its
    /// capture stream node (with input ports when `withPorts`). `properties` go on the stream
    /// (`application.name`: what makes a recording a call); `mediaRole` replaces pw-record's own
    /// `Music` (a `-P` role does not).
    public func startRecorder(
        name: String = "pw-record", target: String? = nil, withPorts: Bool = false, mediaRole: String? = nil, properties: [String: String] = [:]
    ) async throws -> (process: ChildProcess, stream: Node) {
        let file = root.appendingPathComponent("\(name).wav").path
        let extra = properties.sorted { $0.key < $1.key }.map { " \($0.key) = \"\($0.value)\"" }.joined()
        var arguments = ["pw-record", "--rate", "8000", "--channels", "1", "--format", "s16", "-P", "{ node.name = \(name)\(extra) }"]
        if let target { arguments += ["--target", target] }
        if let mediaRole { arguments += ["--media-role", mediaRole] }
        let process = try spawn(name, arguments + [file])
        let pid = String(process.pid)
        let graph = try await observer.waitUntil("\(name)'s capture stream", timeout: .seconds(20)) { graph in
            graph.captureStreams.contains { stream in
                graph.clients[stream.clientID ?? 0]?.props["application.process.id"] == pid
                    && (!withPorts || !graph.ports(of: stream.id, direction: .input).isEmpty)
            }
        }
        let stream = graph.captureStreams.first { graph.clients[$0.clientID ?? 0]?.props["application.process.id"] == pid }!
        return (process, stream)
    }
}
