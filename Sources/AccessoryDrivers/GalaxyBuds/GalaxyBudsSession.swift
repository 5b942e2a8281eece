import RoutingPolicy

/// The Galaxy Buds protocol for one connected headset: stream bytes in, outputs out, no I/O.
///
/// The owner connects RFCOMM to `model.rfcommServiceUUID`, writes what `start()` returns (nothing
/// today: the buds send their full status on their own after connecting and on every change),
/// then hands every chunk it reads to `receive(bytes:)`, however the stream was cut.
public struct GalaxyBudsSession: Sendable {
    public let model: GalaxyBudsModel
    public let rule: WearRule
    public private(set) var counters = DriverCounters()
    /// The last decoded wear state (left first), if any.
    public private(set) var buds: BudPair?

    private var reader: GalaxyBudsFrameReader
    private var placement = ChangeFilter<Placement>()
    private var battery = ChangeFilter<BatteryReport>()
    private var notes = NoteOnce()

    public init(model: GalaxyBudsModel, rule: WearRule = .either) {
        self.model = model
        self.rule = rule
        reader = GalaxyBudsFrameReader(framing: model.framing)
    }

    /// Bytes currently held waiting for the rest of a frame (never above the cap).
    public var bufferedByteCount: Int { reader.bufferedCount }

    /// Nothing to send: status arrives unasked.
    public mutating func start() -> [DriverOutput] { [] }

    /// Any chunk of the stream: part of a frame, several frames, garbage.
    public mutating func receive(bytes: [UInt8]) -> [DriverOutput] {
        let before = counters
        var outputs: [DriverOutput] = []
        for frame in reader.read(bytes, counters: &counters) {
            if frame.headerFlags != 0,
                let note = notes.note(key: 0x204, "Galaxy Buds: header flags \(hex(frame.headerFlags, width: 4)) no note names; frames read as usual (counted)")
            {
                outputs.append(note)
            }
            outputs += handle(frame)
        }
        outputs += notesForNewSkips(since: before)
        return outputs
    }

    private mutating func handle(_ frame: GalaxyBudsFrame) -> [DriverOutput] {
        guard GalaxyBudsStatus.isStatus(id: frame.id) else {
            counters.unknownOpcodes += 1
            return notes.note(key: Int(frame.id), "Galaxy Buds: skipping message id \(hex(frame.id)) (counted from now on, not logged)").map { [$0] } ?? []
        }
        guard let status = GalaxyBudsStatus.decode(id: frame.id, payload: frame.payload, model: model) else {
            counters.malformed += 1
            return notes.note(key: 0x100 + Int(frame.id), "Galaxy Buds: status \(hex(frame.id)) too short for \(model.rawValue) (\(frame.payload.count) bytes)").map { [$0] } ?? []
        }
        counters.decoded += 1
        counters.unknownValues += status.unknownValues
        buds = status.buds
        var outputs: [DriverOutput] = []
        if let worn = status.buds.placement(rule: rule), let changed = placement.changed(worn) {
            outputs.append(.placement(changed))
        }
        if !status.battery.isEmpty, let changed = battery.changed(status.battery) {
            outputs.append(.battery(changed))
        }
        return outputs
    }

    /// One note the first time each kind of framing damage shows up.
    private mutating func notesForNewSkips(since before: DriverCounters) -> [DriverOutput] {
        var outputs: [DriverOutput] = []
        if counters.badCRC > before.badCRC, let note = notes.note(key: 0x200, "Galaxy Buds: dropped a frame with a bad CRC") {
            outputs.append(note)
        }
        if counters.oversized > before.oversized, let note = notes.note(key: 0x201, "Galaxy Buds: dropped an oversized frame") {
            outputs.append(note)
        }
        if counters.malformed > before.malformed, let note = notes.note(key: 0x202, "Galaxy Buds: dropped a malformed frame") {
            outputs.append(note)
        }
        if counters.skippedBytes > before.skippedBytes, let note = notes.note(key: 0x203, "Galaxy Buds: skipped bytes outside any frame") {
            outputs.append(note)
        }
        return outputs
    }
}
