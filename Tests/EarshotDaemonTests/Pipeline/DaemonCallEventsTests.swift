import ControlProtocol
import WireFields
import AudioGraph
import RoutingPolicy
import SystemBridge
import TestScheduling
import Testing

@testable import EarshotDaemon

/// Calls (docs/policy.md §8 `bluetooth-microphone = "calls"`) through the daemon's one input
/// path: what subscribers, `status` and the D-Bus service are told when a worn headset's
/// microphone is kept for calls and a call comes and is given back.
@Suite("Daemon pipeline: calls on the outward surfaces", .blockingCalls)
struct DaemonCallEventsTests {
    typealias H = DaemonHarness
    static let laptopMicrophone = DaemonInputSideTests.laptopMicrophone
    /// WirePlumber 0.5's input node of a headset playing A2DP (`bluez5.loopback`).
    static let headsetInput = "bluez_input.AA:BB:CC:DD:EE:FF"
    static let callID: ObjectID = 90

    /// The microphone graph (the laptop's, the configured default source, and a recorder that
    /// is no call) with the headset's input as WirePlumber 0.5 has it while A2DP plays.
    static func graph() -> Graph {
        var graph = DaemonInputSideTests.graph(sessionManager: true)
        graph.apply(.node(Node(id: 53, props: [
            "node.name": headsetInput, "media.class": "Audio/Source", "object.serial": "553", "device.bus": "bluetooth",
            "device.form-factor": "headset", "api.bluez5.address": H.address, "bluez5.loopback": "true",
        ])))
        return graph
    }

    static let call = Node(id: callID, state: .running, props: [
        "media.class": "Stream/Input/Audio", "node.name": "softphone", "application.name": "Some Softphone", "media.role": "Communication",
        "object.serial": "590",
    ], inputPorts: 1, outputPorts: 0)

    @Test("headset on: call-source; a call: stream-moved (call) and status lists it; headset off: call-source and stream-moved (back); each also as D-Bus")
    func callsOutward() async throws {
        let h = try await H()
        let subscription = await h.daemon.subscribe()
        await h.connect(Self.graph())
        #expect(await h.daemon.status().calls == nil, "no worn headset: no calls of their own")

        _ = await h.place("on-head", register: true)
        var status = await h.daemon.status()
        #expect(status.decisionRecord?.defaultSource == Self.laptopMicrophone, "the headset's input is kept for calls")
        #expect(status.calls?.source == Self.headsetInput && status.calls?.streams.isEmpty == true)
        #expect(EarshotBusProperty.callSource.value(in: status) == .string(Self.headsetInput))
        let text = StatusText.render(status, explain: false)
        #expect(text.contains("default source: \(Self.laptopMicrophone)"))
        #expect(text.contains("\ncalls:          \(Self.headsetInput) (keeps A2DP: calls only)\n"), "\(text)")
        #expect(StatusText.render(status, explain: true).contains("keeps A2DP: calls only ("), "--explain says why the headset's input is not the default")

        await h.changes(.node(Self.call))
        status = await h.daemon.status()
        #expect(status.calls?.streams.map(\.stream) == [Self.callID])
        #expect(status.calls?.moves.map(\.kind.known) == [.call])
        #expect(StatusText.render(status, explain: false).contains(
            "\ncalls:          \(Self.headsetInput) (keeps A2DP: calls only)\n                stream #90 Some Softphone (Communication): media.role = Communication\n"))

        _ = await h.place("off-head", register: true)
        status = await h.daemon.status()
        #expect(status.calls?.source == nil && status.calls?.streams.isEmpty != false)
        #expect(!StatusText.render(status, explain: false).contains("calls:"))
        await h.stop()

        var events: [ControlWire.Event] = []
        for await event in subscription {
            switch event {
            case .streamMoved, .callSource: events.append(event)
            default: break
            }
        }
        guard events.count == 4, case .callSource(let on) = events[0], case .streamMoved(let called) = events[1],
            case .callSource(let off) = events[2], case .streamMoved(let back) = events[3]
        else {
            Issue.record("call-source, stream-moved (call), call-source, stream-moved (back): \(events)")
            return
        }
        #expect(on.previous == nil && on.current == Self.headsetInput)
        #expect(called.move.kind == .call && called.move.stream == Self.callID && called.move.serial == 590 && called.move.to == Self.headsetInput)
        #expect(called.move.application == "Some Softphone" && called.move.role == "Communication" && called.move.from == nil)
        #expect(off.previous == Self.headsetInput && off.current == nil)
        #expect(back.move.kind == .back && back.move.stream == Self.callID && back.move.from == Self.headsetInput && back.move.to == nil)

        // What the D-Bus service sends for them (EarshotBusService emits exactly these).
        #expect(events.flatMap { EarshotBusSignals.signals(for: $0).map(\.member) } == ["StreamMoved", "StreamMoved"])
        #expect(EarshotBusSignals.signals(for: events[1]).first?.arguments.prefix(3) == [.string("call"), .uint64(UInt64(Self.callID)), .uint64(590)])
        #expect(events.compactMap { EarshotBusProperty.changedSignal(for: $0)?[1] } == [
            .properties(["CallSource": .string(Self.headsetInput)]), .properties(["CallSource": .string("")]),
        ])
    }
}
