import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

@testable import EarshotCommands

/// Issue 28 item 3: a card whose exporter stops answering (its process under SIGSTOP) must
/// not stop Earshot deciding for the rest of the graph. PipeWire holds a client busy while a
/// device it asked for params has not answered (src/pipewire/impl-device.c), so Earshot asks
/// on connections of its own (`DeviceParamsChannel`), gives each device a deadline, says once
/// which device did not answer, and takes its routes when they come (SIGCONT).
@Suite("An exporter that stops answering", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct StoppedExporterTests {
    typealias D = DaemonFixture
    static let laptop = "alsa_output.pci-test.analog-stereo"
    static let silence = "did not answer for its routes"
    static let answered = "answered: its routes count again"

    static let laptopCard = RouteDevice.Configuration(
        deviceProperties: ["device.name": "alsa_card.pci-test", "device.bus": "pci", "device.form-factor": "internal"],
        routes: [.speaker(available: .unknown), .headphones(available: .yes)],
        nodes: [.sink(name: laptop, description: "Built-in Audio", device: 0)], active: [0: "analog-output-speaker"])

    @Test("a card stopped at start and mid-change: the worn headset still takes the output, status answers, the card is named once, its routes count after SIGCONT")
    func stoppedCard() async throws {
        try await withSandbox(.init(sinks: [.headphones()])) { sandbox in
            let card = try await RouteDevice.start(in: sandbox, Self.laptopCard)
            defer { card.stop() }
            // Stopped before the daemon starts, right after a jack changed: the server's copy
            // of its params is gone (a changed param's cache is dropped on both stacks), so the
            // daemon's first reading of the card is forwarded to the stopped card and waits.
            try await card.setAvailableThenStop(route: "analog-output-headphones", .no)
            defer { card.resume() }
            let daemon = try D.start(in: sandbox)
            try await daemon.process.waitForLog(containing: "connected to PipeWire")
            #expect(Self.lines(Self.silence, in: daemon).map { $0.contains("device \(card.deviceID) \"alsa_card.pci-test\"") } == [true])
            try daemon.register(placement: "on-head")
            try await daemon.waitForRoute(to: D.headphones, streams: [])
            let status = try JSONValue.parse(try daemon.earshot("status", "--json").output)
            #expect(status["decision"]?["default"] == .string(D.headphones), "\(status)")

            card.resume()
            try await daemon.process.waitForLog(containing: Self.answered)
            // The card's routes count: with the headset off, the laptop's sink plays on its speakers.
            try daemon.place("off-head")
            try await daemon.waitForRoute(to: Self.laptop, streams: [])
            #expect(try JSONValue.parse(try daemon.earshot("status", "--json").output)["decision"]?["port"] == .string("Speakers"))

            // Mid-run: the card says its headphone jack changed, then stops before it answers
            // the reading that change asks for.
            try daemon.place("on-head")
            try await daemon.waitForRoute(to: D.headphones, streams: [])
            try await card.setAvailableThenStop(route: "analog-output-headphones", .yes)
            try await daemon.process.waitForLog(containing: Self.silence, occurrences: 2)
            // Deciding goes on: the headset comes off, the output moves, status answers.
            try daemon.place("off-head")
            try await daemon.waitForRoute(to: Self.laptop, streams: [])
            #expect(try JSONValue.parse(try daemon.earshot("status", "--json").output)["decision"]?["default"] == .string(Self.laptop))

            card.resume()
            try await daemon.process.waitForLog(containing: Self.answered, occurrences: 2)
            // The jack the card reported before it stopped now counts: headphones plugged into
            // the default sink.
            try await daemon.process.waitForLog(containing: "port \"Headphones\" of \(Self.laptop) plugged")
            #expect(Self.count(Self.silence, in: daemon) == 2, "said once each time: \(daemon.process.logTail(lines: 80))")
        }
    }

    static func count(_ text: String, in daemon: D) -> Int {
        lines(text, in: daemon).count
    }

    static func lines(_ text: String, in daemon: D) -> [Substring] {
        let log = daemon.process.logFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
        return log.split(separator: "\n").filter { $0.contains(text) }
    }
}
