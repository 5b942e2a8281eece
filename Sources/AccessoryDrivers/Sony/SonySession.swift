import RoutingPolicy

/// Sony's MDR protocol for one connected set: stream bytes in, outputs out, no I/O.
/// (Contract stub: the protocol lands with the Sony driver; the daemon is wired against this.)
public struct SonySession: Sendable {
    public let form: SonyForm
    public let rule: WearRule
    public private(set) var counters = DriverCounters()

    public init(form: SonyForm, rule: WearRule = .either) {
        self.form = form
        self.rule = rule
    }

    /// The handshake, to write once the channel is open.
    public mutating func start() -> [DriverOutput] { [] }

    /// Any chunk of the stream: part of a frame, several frames, garbage.
    public mutating func receive(bytes: [UInt8]) -> [DriverOutput] { [] }

    /// When the owner must call `timeout(generation:)` (an unanswered handshake or command).
    public var deadline: (generation: Int, after: Duration)? { nil }

    /// The deadline of `generation` passed; one of an older generation does nothing.
    public mutating func timeout(generation: Int) -> [DriverOutput] { [] }
}
