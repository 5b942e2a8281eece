import WireFields
import AudioGraph
import RoutingPolicy
import Testing

/// The accessory API: register / current / update / unregister and its four error codes.
struct AccessoryAPITests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var setup: [String] = []
        /// One request as JSON: `{"register": {…}}`, `{"update": {…}}` or `{"unregister": {…}}`.
        var request: String
        var code: AccessoryError.Code?
        var config = PolicyConfig()
        var testDescription: String { name }
    }

    static let registerHP = #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.reporter","capabilities":["audio-switching","placement"],"placement":"off-head"}}"#
    static let registerSwitchOnly = #"{"register":{"accessory":"aa:bb:cc:dd:ee:ff","reporter":"org.example.reporter","capabilities":["audio-switching"]}}"#
    static let registerPlacementOnly = #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.reporter","capabilities":["placement"]}}"#
    static let registerByDriver = #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.earshot.driver.aap","capabilities":["audio-switching","placement"],"placement":"in-ear"}}"#
    static let onlyOtherReporter: PolicyConfig = {
        var config = PolicyConfig()
        var entry = StaticAccessory()
        entry.address = BluetoothAddress("AA:BB:CC:DD:EE:FF")
        entry.reporter = "org.example.trusted"
        entry.location = SourceLocation(file: "e.toml", line: 4, column: 1)
        config.accessories = [entry]
        return config
    }()

    static let cases: [Case] = [
        Case(name: "register", request: registerHP, code: nil),
        Case(name: "register lower-case address", request: registerSwitchOnly, code: nil),
        Case(name: "register by node.name", request: #"{"register":{"accessory":"alsa_output.usb-FiiO_K3-00.analog-stereo","reporter":"org.example.r","capabilities":[]}}"#, code: nil),
        Case(name: "update placement", setup: [registerHP], request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"in-ear"}}"#, code: nil),
        Case(name: "clear a source with null", setup: [registerHP], request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","primary-source":null}}"#, code: nil),
        Case(name: "unregister", setup: [registerHP], request: #"{"unregister":{"accessory":"AA:BB:CC:DD:EE:FF"}}"#, code: nil),
        Case(name: "placement without the placement capability", setup: [registerSwitchOnly],
             request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}}"#, code: .accessoryNotCapable),
        Case(name: "sources without audio-switching", setup: [registerPlacementOnly],
             request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","primary-source":"11:22:33:44:55:66"}}"#, code: .accessoryNotCapable),
        Case(name: "register a placement without declaring it",
             request: #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":[],"placement":"on-head"}}"#, code: .accessoryNotCapable),
        Case(name: "malformed address", request: #"{"update":{"accessory":"AA:BB:CC:DD:EE","placement":"on-head"}}"#, code: .invalidRequest),
        Case(name: "malformed source", setup: [registerHP], request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","primary-source":"host"}}"#, code: .invalidRequest),
        Case(name: "unknown placement", setup: [registerHP], request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-ear"}}"#, code: .invalidRequest),
        Case(name: "unknown field", setup: [registerHP], request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","battery":50}}"#, code: .invalidRequest),
        Case(name: "empty update", setup: [registerHP], request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF"}}"#, code: .invalidRequest),
        Case(name: "unknown capability", request: #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":["noise-cancelling"]}}"#, code: .invalidRequest),
        Case(name: "reporter not in reverse-DNS form", request: #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"airpods","capabilities":[]}}"#, code: .invalidRequest),
        Case(name: "already registered by another reporter", setup: [registerHP],
             request: #"{"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.other","capabilities":[]}}"#, code: .invalidRequest),
        Case(name: "the config reserves it for another reporter", request: registerHP, code: .invalidRequest, config: onlyOtherReporter),
        Case(name: "a built-in driver's registration gives way to the user's own reporter", setup: [registerByDriver],
             request: registerHP, code: nil),
        Case(name: "a built-in driver cannot take a registration from another reporter", setup: [registerHP],
             request: registerByDriver, code: .invalidRequest),
        Case(name: "a built-in driver cannot update what another reporter took from it", setup: [registerByDriver, registerHP],
             request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.earshot.driver.aap","placement":"in-ear"}}"#, code: .invalidRequest),
        Case(name: "the same reporter may register again", setup: [registerHP], request: registerHP, code: nil),
        Case(name: "update after unregister is invalidated",
             setup: [registerHP, #"{"unregister":{"accessory":"AA:BB:CC:DD:EE:FF"}}"#],
             request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"in-ear"}}"#, code: .invalidated),
        Case(name: "update of an accessory never registered is unknown",
             request: #"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"in-ear"}}"#, code: .unknown),
    ]

    @Test(arguments: cases)
    func request(_ c: Case) throws {
        var engine = PolicyEngine(graph: Sinks.desktop, config: c.config)
        _ = engine.handle(.start, at: 0)
        for setup in c.setup {
            #expect(engine.handle(.accessory(try Self.decode(setup).get()), at: 1).decision.error == nil)
        }
        let before = engine.accessories
        let decision: Decision
        switch Self.decode(c.request) {
        case .success(let request): decision = engine.handle(.accessory(request), at: 2).decision
        case .failure(let error):
            #expect(error.code == c.code)
            return
        }
        #expect(decision.error?.code == c.code)
        if let error = decision.error {
            #expect(engine.accessories == before, "a refused request changes nothing")
            #expect(!decision.changed)
            #expect(error.message.contains(":"), "the message says what to do: \(error.message)")
        }
    }

    @Test func currentReturnsTheConfiguration() throws {
        var engine = PolicyEngine(graph: Sinks.desktop, config: PolicyConfig())
        _ = engine.handle(.accessory(try Self.decode(Self.registerHP).get()), at: 0)
        _ = engine.handle(.accessory(try Self.decode(#"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"in-ear"}}"#).get()), at: 5)
        let identity = AccessoryIdentity(parsing: "aa:bb:cc:dd:ee:ff")!
        let configuration = try engine.current(identity).get()
        #expect(configuration.placement == .inEar)
        #expect(configuration.capabilities == [.audioSwitching, .placement])
        #expect(engine.current(.address(BluetoothAddress("00:00:00:00:00:01")!)).failureCode == .unknown)
    }

    @Test("update and unregister by another reporter are refused, naming the owner; the owner's go through")
    func ownership() throws {
        var engine = PolicyEngine(graph: Sinks.desktop, config: PolicyConfig())
        _ = engine.handle(.accessory(try Self.decode(Self.registerHP).get()), at: 0)
        let owner = try #require(engine.accessories[AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!]?.registration.reporter)
        let intruderUpdate = try Self.decode(#"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.intruder","placement":"in-ear"}}"#).get()
        let refused = engine.handle(.accessory(intruderUpdate), at: 10).decision.error
        #expect(refused?.code == .invalidRequest)
        #expect(refused?.message == "AA:BB:CC:DD:EE:FF is registered by \(owner), not org.example.intruder: only \(owner) may update it")
        #expect(engine.accessories[AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!]?.registration.configuration.placement != .inEar)
        let intruderEnd = try Self.decode(#"{"unregister":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.intruder"}}"#).get()
        let endRefused = engine.handle(.accessory(intruderEnd), at: 20).decision.error
        #expect(endRefused?.code == .invalidRequest)
        #expect(endRefused?.message.contains("registered by \(owner)") == true)
        #expect(engine.accessories[AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!] != nil)
        let ownerUpdate = try Self.decode(#"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"\#(owner)","placement":"in-ear"}}"#).get()
        #expect(engine.handle(.accessory(ownerUpdate), at: 30).decision.error == nil)
        let ownerEnd = try Self.decode(#"{"unregister":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"\#(owner)"}}"#).get()
        #expect(engine.handle(.accessory(ownerEnd), at: 40).decision.error == nil)
        #expect(engine.accessories[AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!] == nil)
    }

    @Test func configReloadDropsRegistrationsItNoLongerAllows() throws {
        var engine = PolicyEngine(graph: Sinks.desktop, config: PolicyConfig())
        _ = engine.handle(.accessory(try Self.decode(Self.registerHP).get()), at: 0)
        _ = engine.handle(.configReplaced(Self.onlyOtherReporter), at: 10)
        let update = try Self.decode(#"{"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"in-ear"}}"#).get()
        let error = engine.handle(.accessory(update), at: 20).decision.error
        #expect(error?.code == .invalidated)
        #expect(error?.message.contains("config reload") == true)
    }

    static func decode(_ line: String) -> Result<AccessoryRequest, AccessoryError> {
        guard case .object(let fields)? = try? JSONValue.parse(line), let (verb, body) = fields.first else {
            return .failure(AccessoryError(.unknown, "bad test line"))
        }
        switch verb {
        case "register": return AccessoryRequestDecoder.register(body)
        case "update": return AccessoryRequestDecoder.update(body)
        default: return AccessoryRequestDecoder.unregister(body)
        }
    }
}

extension Result {
    var failureCode: AccessoryError.Code? {
        if case .failure(let error) = self { return (error as? AccessoryError)?.code }
        return nil
    }
}

struct BluetoothAddressTests {
    @Test(arguments: [
        ("AA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF"), ("aa:bb:cc:dd:ee:ff", "AA:BB:CC:DD:EE:FF"), ("0a:1B:2c:3D:4e:5F", "0A:1B:2C:3D:4E:5F"),
    ])
    func parses(_ text: String, _ canonical: String) {
        #expect(BluetoothAddress(text)?.description == canonical)
        #expect(BluetoothAddress(text)?.bytes.count == 6)
    }

    @Test(arguments: ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "GG:BB:CC:DD:EE:FF", "AABBCCDDEEFF", " AA:BB:CC:DD:EE:F"])
    func refuses(_ text: String) {
        #expect(BluetoothAddress(text) == nil)
    }
}

struct GlobTests {
    @Test(arguments: [
        ("alsa_output.*", "alsa_output.pci-0000_00_1f.3.hdmi-stereo", true), ("*hdmi*", "alsa_output.pci.hdmi-stereo", true),
        ("*hdmi*", "alsa_output.usb", false), ("bluez_output.??_*", "bluez_output.AA_BB", true), ("exact", "exact", true),
        ("exact", "exactly", false), ("a*b*c", "axxbyyc", true), ("a*b*c", "axxbyy", false),
    ])
    func matches(_ pattern: String, _ text: String, _ expected: Bool) {
        #expect(Glob(pattern).matches(text) == expected)
    }
}

/// Issue 12 item 8: the address forms people paste are addresses; blank names are refused.
struct AccessoryIdentityFormsTests {
    @Test(arguments: [
        ("AA-BB-CC-DD-EE-FF", "AA:BB:CC:DD:EE:FF"), ("AABBCCDDEEFF", "AA:BB:CC:DD:EE:FF"), ("aa-bb-cc-dd-ee-01", "AA:BB:CC:DD:EE:01"),
        ("aabbccddee01", "AA:BB:CC:DD:EE:01"), ("aa:bb:cc:dd:ee:ff", "AA:BB:CC:DD:EE:FF"),
    ])
    func addressForms(_ text: String, _ canonical: String) throws {
        #expect(AccessoryIdentity(parsing: text) == .address(BluetoothAddress(canonical)!))
        let request = try AccessoryAPITests.decode(
            #"{"register":{"accessory":"\#(text)","reporter":"org.example.r","capabilities":["audio-switching"],"primary-source":"\#(text)"}}"#).get()
        guard case .register(let identity, _, let configuration) = request else {
            Issue.record("not a register: \(request)")
            return
        }
        #expect(identity.description == canonical)
        #expect(configuration.primarySource?.description == canonical)
    }

    @Test(arguments: ["", " ", "  ", "\t", " alsa_output.x", "alsa_output.x ", "alsa\noutput"])
    func blankOrWhitespaceRefused(_ text: String) {
        #expect(AccessoryIdentity(parsing: text) == nil)
        let body = JSONValue.object(["accessory": .string(text), "reporter": .string("org.example.r"), "capabilities": .array([])])
        guard case .failure(let error) = AccessoryRequestDecoder.register(body) else {
            Issue.record("\(text.debugDescription) was accepted")
            return
        }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("blank accessory") || error.message.contains("no whitespace at either end"), "\(error.message)")
    }

    @Test(arguments: ["alsa_output.pci-0000_00_1f.3.analog-stereo", "AA-BB-CC", "deadbeef", "bluez_output.AA_BB_CC_DD_EE_FF.1"])
    func nodeNamesStayNames(_ text: String) {
        #expect(AccessoryIdentity(parsing: text) == .nodeName(text))
    }
}

/// Issue 12 item 4: registrations are capped per reporter and in all.
struct RegistrationCapTests {
    static func register(_ engine: inout PolicyEngine, _ name: String, by reporter: String) -> AccessoryError? {
        engine.handle(.accessory(.register(.nodeName(name), reporter: reporter, AccessoryConfiguration(capabilities: []))), at: 0).decision.error
    }

    @Test("a reporter's registrations beyond the per-reporter cap are refused; registering one again is not new; others may still register")
    func perReporter() {
        var engine = PolicyEngine(graph: Graph(), config: PolicyConfig())
        let cap = AccessoryRegistry.maximumPerReporter
        for index in 0..<cap { #expect(Self.register(&engine, "n\(index)", by: "org.example.a") == nil) }
        let refused = Self.register(&engine, "one-more", by: "org.example.a")
        #expect(refused?.code == .invalidRequest)
        #expect(refused?.message == "too many registrations for org.example.a: it has \(cap), the limit per reporter; unregister one first")
        #expect(Self.register(&engine, "n0", by: "org.example.a") == nil)
        #expect(Self.register(&engine, "one-more", by: "org.example.b") == nil)
        _ = engine.handle(.accessory(.unregister(.nodeName("n1"), reporter: "org.example.a")), at: 1)
        #expect(Self.register(&engine, "n1-again", by: "org.example.a") == nil)
    }

    @Test("registrations beyond the cap in all are refused, whoever asks")
    func total() {
        var engine = PolicyEngine(graph: Graph(), config: PolicyConfig())
        let perReporter = AccessoryRegistry.maximumPerReporter
        for index in 0..<AccessoryRegistry.maximumTotal {
            #expect(Self.register(&engine, "n\(index)", by: "org.example.r\(index / perReporter)") == nil)
        }
        let refused = Self.register(&engine, "one-more", by: "org.example.new")
        #expect(refused?.message == "too many registrations: \(AccessoryRegistry.maximumTotal) are live, the limit in all is \(AccessoryRegistry.maximumTotal); unregister one first")
        #expect(engine.accessories.entries.count == AccessoryRegistry.maximumTotal)
    }
}

/// Issue 21: one limit per field, the same on every transport (they share the decoder) and in
/// the state file (it parses with the same rules).
@Suite("field limits")
struct FieldLimitTests {
    @Test("a node.name over 1024 bytes and a reporter over 255 are refused, saying the limit")
    func limits() throws {
        let long = String(repeating: "n", count: AccessoryIdentity.maximumNameBytes + 1)
        #expect(AccessoryIdentity(parsing: long) == nil)
        #expect(AccessoryIdentity(parsing: String(long.dropLast())) == .nodeName(String(long.dropLast())))
        let body: JSONValue = .object(["accessory": .string(long), "reporter": .string("org.example.r"), "capabilities": .array([])])
        guard case .failure(let error) = AccessoryRequestDecoder.register(body) else {
            Issue.record("a 1025-byte name was accepted")
            return
        }
        #expect(error.message.contains("at most 1024 bytes"), "\(error.message)")
        let reporter = "org." + String(repeating: "r", count: ReporterName.maximumBytes)
        #expect(!ReporterName.isValid(reporter))
        #expect(ReporterName.isValid("org.example.r"))
    }
}
