import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import RoutingPolicy
import TestScheduling
import Testing

/// The state file's schema (docs/state-file.md): versioned on its own, old files load, and a
/// file that cannot be read is refused naming the field.
@Suite("state file schema", .blockingCalls)
struct StateFileTests {
    static let path = "/home/u/.local/state/earshot/state.json"

    /// A file written by the StateStore of cc2afd9 (before the schema had types of its own).
    static func fixture() throws -> Data {
        let url = try #require(Bundle.module.url(forResource: "state-v1", withExtension: "json", subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    static let fixtureState = PersistedState(
        registrations: [
            AccessoryRegistration(
                identity: .address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!), reporter: "org.example.airpods-reporter",
                configuration: AccessoryConfiguration(
                    capabilities: [.audioSwitching, .placement], placement: .inEar, primarySource: BluetoothAddress("11:22:33:44:55:66"),
                    secondarySource: BluetoothAddress("66:55:44:33:22:11")),
                registeredAt: 0),
            AccessoryRegistration(
                identity: .address(BluetoothAddress("00:1A:7D:DA:71:13")!), reporter: "org.earshot.cli",
                configuration: AccessoryConfiguration(capabilities: [.placement], placement: .offHead), registeredAt: 0),
            AccessoryRegistration(
                identity: .nodeName("alsa_output.usb-dac.analog-stereo"), reporter: "org.example.dac",
                configuration: AccessoryConfiguration(capabilities: []), registeredAt: 0),
        ],
        history: [
            .init(at: 1_763_800_000_000, current: "alsa_output.pci.analog-stereo", previous: nil, reason: "initial"),
            .init(at: 1_763_800_005_120, current: "bluez_output.AA_BB_CC_DD_EE_FF.1", previous: "alsa_output.pci.analog-stereo", reason: "placement-changed"),
            .init(at: 1_763_800_009_000, current: nil, previous: "bluez_output.AA_BB_CC_DD_EE_FF.1", reason: "no-suitable-route"),
        ])

    static func refusal(_ text: String) -> StateFileError? {
        do {
            _ = try StateFile.decode(Data(text.utf8), path: path)
            return nil
        } catch {
            return error
        }
    }

    /// A version-1 file with one registration whose fields are `fields` (merged over a valid one).
    static func registration(_ fields: String) -> String {
        #"{"version":1,"history":[],"registrations":[{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":["placement"],"placement":"on-head"},{"accessory":"AA:BB:CC:DD:EE:01","reporter":"org.example.r","#
            + fields + "}]}"
    }

    @Test("a state file written before the schema had its own types loads, history included; written back as version 2 with the same registrations and history")
    func oldFileLoads() throws {
        let data = try Self.fixture()
        let state = try StateFile.decode(data, path: Self.path)
        #expect(state == Self.fixtureState)
        let written = try StateFile.encode(state)
        let old = try JSONValue.parse(String(decoding: data, as: UTF8.self)), new = try JSONValue.parse(String(decoding: written, as: UTF8.self))
        #expect(new["version"] == .integer(2))
        #expect(new["registrations"] == old["registrations"] && new["history"] == old["history"])
        #expect(try StateFile.decode(written, path: Self.path) == state)
    }

    @Test("version 2: input history entries carry their direction, each side's choices come back; a version 1 file's unknown fields are ignored")
    func version2() throws {
        var state = Self.fixtureState
        state.history.append(.init(at: 9, current: "bluez_input.AA_BB_CC_DD_EE_FF.0", previous: "alsa_input.pci", reason: "placement-changed", direction: .input))
        state.choices = [.output: .init(lastChoice: "alsa_output.pci", override: nil), .input: .init(lastChoice: "alsa_input.usb", override: "alsa_input.usb")]
        let written = try StateFile.encode(state)
        #expect(try StateFile.decode(written, path: Self.path) == state)
        let json = try JSONValue.parse(String(decoding: written, as: UTF8.self))
        #expect(json["choices"]?["input"]?["override"] == .string("alsa_input.usb"))
        #expect(json["choices"]?["output"]?["override"] == .null)
        // Version 1 knew neither: a direction or choices in one are not read.
        let old = #"{"version":1,"registrations":[],"history":[{"at":1,"current":"x","reason":"initial","direction":"input"}],"choices":{"input":{"last-choice":"y"}}}"#
        let loaded = try StateFile.decode(Data(old.utf8), path: Self.path)
        #expect(loaded.history.first?.direction == .output && loaded.choices.isEmpty)
        let bad = try #require(Self.refusal(#"{"version":2,"registrations":[],"history":[],"choices":{"sideways":{}}}"#))
        #expect(bad.field == "choices.sideways")
        let wrongDirection = try #require(Self.refusal(#"{"version":2,"registrations":[],"history":[{"at":1,"reason":"initial","direction":"up"}]}"#))
        #expect(wrongDirection.field == "history[0].direction")
    }

    @Test("registrations and history round-trip; the history keeps its newest entries up to the limit")
    func roundTrip() throws {
        var state = Self.fixtureState
        #expect(try StateFile.decode(StateFile.encode(state), path: Self.path) == state)
        #expect(try StateFile.decode(StateFile.encode(PersistedState()), path: Self.path) == PersistedState())

        state.history = (0..<(PersistedState.historyLimit + 5)).map { .init(at: Int64($0), current: "sink-\($0)", previous: nil, reason: "initial") }
        let loaded = try StateFile.decode(StateFile.encode(state), path: Self.path)
        #expect(loaded.history.count == PersistedState.historyLimit)
        #expect(loaded.history.first?.at == 5)
        #expect(loaded.history.last?.at == Int64(PersistedState.historyLimit + 4))
    }

    /// Issue 38: what a daemon held silent survives it, so the next start gives it back.
    @Test("held streams round-trip (left out when none); a malformed accessory is refused with its field")
    func heldStreams() throws {
        var state = Self.fixtureState
        state.held = [
            HeldStream(
                stream: 81, serial: 4081, application: "Chromium", name: "Playback", sink: "bluez_output.AA_BB_CC_DD_EE_FF.1",
                accessory: AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!),
            HeldStream(stream: 82, serial: nil, application: nil, name: nil, sink: "alsa_output.pci", accessory: .nodeName("alsa_output.pci")),
        ]
        #expect(try StateFile.decode(StateFile.encode(state), path: Self.path) == state)
        let none = try JSONValue.parse(String(decoding: StateFile.encode(Self.fixtureState), as: UTF8.self))
        #expect(none["held"] == nil, "a file with nothing held reads as before")
        let bad = try #require(Self.refusal(#"{"version":2,"registrations":[],"history":[],"held":[{"stream":1,"sink":"s","accessory":""}]}"#))
        #expect(bad.field == "held[0].accessory")
        let missing = try #require(Self.refusal(#"{"version":2,"registrations":[],"history":[],"held":[{"stream":1,"accessory":"x"}]}"#))
        #expect(missing.field?.hasPrefix("held[0]") == true)
    }

    @Test("the file says its version; this Earshot writes the one it reads")
    func version() throws {
        let written = try JSONValue.parse(String(decoding: StateFile.encode(Self.fixtureState), as: UTF8.self))
        #expect(written["version"] == .integer(Int64(StateFile.currentVersion)))
        #expect(StateFile.currentVersion == 2)
    }

    @Test("a future version is refused as newer, before any of its fields is read")
    func futureVersion() throws {
        let error = try #require(Self.refusal(#"{"version":3,"accessories":{}}"#))
        #expect(error.field == "version")
        #expect(error.problem.contains("version 3 was written by a newer Earshot"))
        #expect(error.description == "\(Self.path): version: version 3 was written by a newer Earshot; this one reads versions 1 to 2")
    }

    @Test("a missing, mistyped or impossible version is refused naming the version field")
    func badVersion() throws {
        let missing = try #require(Self.refusal(#"{"registrations":[],"history":[]}"#))
        #expect(missing.field == "version" && missing.problem == "missing")
        let text = try #require(Self.refusal(#"{"version":"1","registrations":[],"history":[]}"#))
        #expect(text.field == "version" && text.problem == "expected an integer")
        let zero = try #require(Self.refusal(#"{"version":0,"registrations":[],"history":[]}"#))
        #expect(zero.field == "version" && zero.problem.contains("unknown version 0"))
    }

    @Test("a field that cannot be read is named with its place: registrations[1].placement, history[0].at")
    func badFields() throws {
        let placement = try #require(Self.refusal(Self.registration(#""capabilities":["placement"],"placement":"sideways""#)))
        #expect(placement.field == "registrations[1].placement")
        #expect(placement.problem.contains("unknown placement \"sideways\""))

        let reporter = try #require(Self.refusal(#"{"version":1,"history":[],"registrations":[{"accessory":"AA:BB:CC:DD:EE:FF","capabilities":[]}]}"#))
        #expect(reporter.field == "registrations[0].reporter" && reporter.problem == "missing")
        #expect(reporter.description == "\(Self.path): registrations[0].reporter: missing")

        let source = try #require(Self.refusal(Self.registration(#""capabilities":["audio-switching"],"primary-source":"11:22""#)))
        #expect(source.field == "registrations[1].primary-source")
        #expect(source.problem.contains("malformed address \"11:22\""))

        let capability = try #require(Self.refusal(Self.registration(#""capabilities":["telepathy"]"#)))
        #expect(capability.field == "registrations[1].capabilities" && capability.problem.contains("unknown capability \"telepathy\""))

        let accessory = try #require(Self.refusal(#"{"version":1,"history":[],"registrations":[{"accessory":"AA:BB","reporter":"org.example.r","capabilities":[]}]}"#))
        #expect(accessory.field == "registrations[0].accessory" && accessory.problem.contains("malformed accessory"))

        let at = try #require(Self.refusal(#"{"version":1,"registrations":[],"history":[{"at":"soon","reason":"initial"}]}"#))
        #expect(at.field == "history[0].at" && at.problem == "expected an integer")

        let history = try #require(Self.refusal(#"{"version":1,"registrations":[]}"#))
        #expect(history.field == "history" && history.problem == "missing")
    }

    @Test("an empty file, one that is not JSON, or not an object is refused as a whole, with where it breaks")
    func corrupt() throws {
        let empty = try #require(Self.refusal("\n"))
        #expect(empty.field == nil && empty.problem == "the file is empty")
        let truncated = try #require(Self.refusal("{\n  \"version\" : 1,\n  \"registrations\" : ["))
        #expect(truncated.field == nil)
        #expect(truncated.problem.hasPrefix("not JSON"))
        #expect(truncated.problem.contains("line 3"))
        let array = try #require(Self.refusal("[1]"))
        #expect(array.field == nil && array.problem == "not a JSON object")
    }

    @Test("the example of docs/state-file.md is a version-1 file that loads")
    func documentedExample() throws {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/state-file.md")
        let text = try String(contentsOf: document, encoding: .utf8)
        let block = try #require(text.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let state = try StateFile.decode(Data(block.utf8), path: document.path)
        #expect(state.registrations.map(\.identity.description) == ["AA:BB:CC:DD:EE:FF"])
        #expect(state.registrations.first?.configuration.placement == .inEar)
        #expect(state.history.map(\.reason) == ["placement-changed"])
    }

    @Test("StateStore.load says what and where: the file and the field")
    func storeError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.json").path
        try Self.registration(#""capabilities":["placement"],"placement":"sideways""#).write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try StateStore(path: path).load()
        } throws: { error in
            "\(error)".hasPrefix("\(path): registrations[1].placement: unknown placement \"sideways\"")
        }
    }
}
