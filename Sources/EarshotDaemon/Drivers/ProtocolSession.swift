import AccessoryDrivers
import RoutingPolicy

/// Every family's session behind one face: bytes in, outputs out (AccessoryDrivers holds the
/// protocols; this only dispatches).
struct ProtocolSession {
    private enum Session {
        case aap(AAPSession)
        case galaxyBuds(GalaxyBudsSession)
        case sony(SonySession)
    }

    private var session: Session

    init(_ family: AccessoryFamily, rule: WearRule) {
        switch family {
        case .aap: session = .aap(AAPSession(rule: rule))
        case .galaxyBuds(let model): session = .galaxyBuds(GalaxyBudsSession(model: model, rule: rule))
        case .sony(let form, _): session = .sony(SonySession(form: form, rule: rule))
        }
    }

    /// What to send first, once the channel is open.
    mutating func start() -> [DriverOutput] {
        switch session {
        case .aap(var aap):
            defer { session = .aap(aap) }
            return aap.start()
        case .galaxyBuds(var buds):
            defer { session = .galaxyBuds(buds) }
            return buds.start()
        case .sony(var sony):
            defer { session = .sony(sony) }
            return sony.start()
        }
    }

    /// One read: a packet (AAP) or a chunk of the stream (Galaxy Buds, Sony).
    mutating func receive(_ bytes: [UInt8]) -> [DriverOutput] {
        switch session {
        case .aap(var aap):
            defer { session = .aap(aap) }
            return aap.receive(packet: bytes)
        case .galaxyBuds(var buds):
            defer { session = .galaxyBuds(buds) }
            return buds.receive(bytes: bytes)
        case .sony(var sony):
            defer { session = .sony(sony) }
            return sony.receive(bytes: bytes)
        }
    }

    /// The session's next deadline (AAP start-up, Sony handshake and commands), if any.
    var deadline: (generation: Int, after: Duration)? {
        switch session {
        case .aap(let aap): aap.deadline
        case .galaxyBuds: nil
        case .sony(let sony): sony.deadline
        }
    }

    /// The deadline of `generation` passed.
    mutating func timeout(generation: Int) -> [DriverOutput] {
        switch session {
        case .aap(var aap):
            defer { session = .aap(aap) }
            return aap.timeout(generation: generation)
        case .galaxyBuds: return []
        case .sony(var sony):
            defer { session = .sony(sony) }
            return sony.timeout(generation: generation)
        }
    }

    var counters: DriverCounters {
        switch session {
        case .aap(let aap): aap.counters
        case .galaxyBuds(let buds): buds.counters
        case .sony(let sony): sony.counters
        }
    }
}
