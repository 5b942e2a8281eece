import WireFields
import AudioGraph
import RoutingPolicy
import Testing

/// This host's addresses learnt while running (BlueZ's adapters): a change decides again like a
/// change of an accessory's sources, and explanations say where each address came from.
struct HostAddressTests {
    static let adapter = Requests.address(Sinks.host)
    static let otherAdapter = Requests.address("22:33:44:55:66:77")
    static let configured = Requests.address("66:55:44:33:22:11")
    static let hci0 = HostAddress(adapter, from: [.bluez(adapter: "hci0")])
    static let hci1 = HostAddress(otherAdapter, from: [.bluez(adapter: "hci1")])

    static var configWithHost: PolicyConfig {
        var config = PolicyConfig()
        config.hostAddresses = [configured]
        return config
    }

    /// Worn headphones whose primary source is the adapter, on an engine that knows only the config's address.
    static func wornForAdapter() -> PolicyEngine {
        var engine = PolicyEngine(graph: Sinks.desktop, config: configWithHost)
        _ = engine.handle(.start, at: 0)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.host), at: 1)
        return engine
    }

    @Test("an adapter that is the primary source appears: its worn accessory takes the output (source-changed)")
    func adapterAppears() {
        var engine = Self.wornForAdapter()
        #expect(engine.currentDefault == Sinks.speakers)
        let decision = engine.handle(.hostAddressesChanged([Self.hci0]), at: 5).decision
        #expect(decision.defaultSink == Sinks.headphones)
        #expect(decision.reason == .sourceChanged)
        #expect(decision.trigger == .hostAddressesChanged)
        #expect(decision.trigger.description == "host addresses")
        #expect(engine.hostAddresses == [Self.configured, Self.adapter])
        #expect(engine.knownHostAddresses.map(\.description) == ["66:55:44:33:22:11 (config)", "11:22:33:44:55:66 (bluez hci0)"])
    }

    @Test("the adapter goes, another comes: the accessory plays for another host, and the reason names each address's origin")
    func adapterReplaced() throws {
        var engine = Self.wornForAdapter()
        _ = engine.handle(.hostAddressesChanged([Self.hci0]), at: 5)
        let decision = engine.handle(.hostAddressesChanged([Self.hci1]), at: 6).decision
        #expect(decision.defaultSink == Sinks.speakers)
        #expect(decision.reason == .sourceChanged)
        let rejected = try #require(decision.rejected.first { $0.node == Sinks.headphones })
        #expect(decision.why(rejected)
            == "§1 accessory AA:BB:CC:DD:EE:FF is playing for another host (primary 11:22:33:44:55:66; this host is 66:55:44:33:22:11 (config), 22:33:44:55:66:77 (bluez hci1))")
        let back = engine.handle(.hostAddressesChanged([Self.hci0, Self.hci1]), at: 7).decision
        #expect(back.defaultSink == Sinks.headphones)
    }

    @Test("inputs before the first graph (a registration, BlueZ's adapter) are kept by rebasing, and the first decision is still `initial`, from the graph's default")
    func rebasedKeepsEarlyInputs() {
        var early = PolicyEngine(graph: Graph(), config: PolicyConfig())
        _ = early.handle(.hostAddressesChanged([Self.hci0]), at: 1)
        _ = early.handle(Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.host), at: 2)
        var engine = early.rebased(onto: Sinks.desktop, at: 3)
        let before = Sinks.desktop.configuredDefaultSinkName ?? Sinks.desktop.effectiveDefaultSinkName
        #expect(engine.currentDefault == before)
        let first = engine.handle(.start, at: 3).decision
        #expect(first.reason == .initial)
        #expect(first.changed)
        #expect(first.previous == before, "previous starts as the graph's default (docs/policy.md)")
        #expect(first.defaultSink == Sinks.headphones)
        #expect(engine.knownHostAddresses.map(\.description) == ["11:22:33:44:55:66 (bluez hci0)"])
    }

    @Test("BlueZ gone (no learnt addresses): the config's host-addresses still count")
    func fallsBackToConfig() {
        var engine = Self.wornForAdapter()
        _ = engine.handle(.hostAddressesChanged([Self.hci0]), at: 5)
        let gone = engine.handle(.hostAddressesChanged([]), at: 6).decision
        #expect(gone.defaultSink == Sinks.speakers)
        #expect(engine.hostAddresses == [Self.configured])
        _ = engine.handle(Requests.sources(Sinks.headphonesAddress, primary: .set(Self.configured)), at: 7)
        #expect(engine.currentDefault == Sinks.headphones)
    }

    @Test("the same addresses again decide again but change nothing")
    func unchangedSet() {
        var engine = Self.wornForAdapter()
        _ = engine.handle(.hostAddressesChanged([Self.hci0]), at: 5)
        let again = engine.handle(.hostAddressesChanged([Self.hci0]), at: 6).decision
        #expect(!again.changed)
        #expect(again.reason == nil)
    }

    @Test("learnt addresses survive a config reload; an address in both lists names both origins")
    func survivesConfigReload() {
        var engine = Self.wornForAdapter()
        _ = engine.handle(.hostAddressesChanged([Self.hci0]), at: 5)
        var config = PolicyConfig()
        config.hostAddresses = [Self.adapter]
        let decision = engine.handle(.configReplaced(config), at: 6).decision
        #expect(decision.defaultSink == Sinks.headphones)
        #expect(engine.knownHostAddresses == [HostAddress(Self.adapter, from: [.config, .bluez(adapter: "hci0")])])
        _ = engine.handle(.configReplaced(PolicyConfig()), at: 7)
        #expect(engine.knownHostAddresses == [Self.hci0])
        #expect(engine.currentDefault == Sinks.headphones)
    }

    @Test("a primary source that becomes this host is named in the worn tier, with where the address came from (§2.2)")
    func primaryBonusFollowsAdapters() throws {
        var engine = PolicyEngine(graph: Sinks.desktop, config: Self.configWithHost)
        _ = engine.handle(.start, at: 0)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.host), at: 1)
        _ = engine.handle(Requests.register(Sinks.headsetAddress, placement: .onHead, primary: "99:99:99:99:99:99", secondary: "66:55:44:33:22:11"), at: 2)
        #expect(engine.currentDefault == Sinks.headset)
        let decision = engine.handle(.hostAddressesChanged([Self.hci0]), at: 3).decision
        // The headset went on later and still wins the worn tier; the headphones' primary source is now this host.
        #expect(decision.defaultSink == Sinks.headset)
        #expect(decision.decidedBy?.why == "beats \(Sinks.headphones) at worn (put on 2 ms vs 1 ms)")
        let headphones = try #require(decision.ranking.first { $0.node == Sinks.headphones })
        let term = try #require(decision.explanation(of: headphones).terms.first { $0.tier == .worn })
        #expect(term.value == "put on 1 ms, primary source")
        #expect(term.why.hasSuffix("; its primary source 11:22:33:44:55:66 (bluez hci0) is this host, not only its secondary"))
    }
}
