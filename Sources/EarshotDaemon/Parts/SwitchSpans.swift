import WireFields
import ControlProtocol

/// `SwitchSpan`: Earshot's own span of a switch a control request causes (docs/performance.md, issue 28):
/// CLOCK_MONOTONIC nanoseconds (`MonotonicClock`, shared by every process) when the request
/// line was read off the socket, when the write of `default.configured.audio.sink` it caused
/// was handed to libpipewire, and when the daemon took that write's echo (PipeWire reporting
/// the value back). WirePlumber's move of the streams is not in it. The daemon keeps the wire's
/// own entries: `status` publishes them as they are.
/// Pairs a control request's write of the configured default with that write's echo, and keeps
/// the last `capacity` spans. Writes are counted by their place in the writer's queue (an
/// ordinal), so a request that wrote a name written before it is not mistaken for the earlier
/// write's echo. Costs two stamps per request that writes, a third at its echo, and nothing
/// else: the storage is reserved once and overwritten in place; only a reader copies it.
struct SwitchSpanTracker {
    static let capacity = 16
    /// Requests' writes still waiting for their echo, at most: a daemon busy elsewhere can take
    /// the next request before the last write's echo.
    static let openCapacity = 4
    /// When the control request whose turn runs now was read (set by the daemon for that turn).
    var requestRead: UInt64?
    /// Requests' writes, sent and not yet echoed, oldest first: each write's ordinal among the
    /// writer's writes.
    private var open: [(ordinal: UInt64, read: UInt64, sent: UInt64)] = []
    private var storage: [ControlWire.SwitchSpanEntry] = []
    private var next = 0

    init() {
        storage.reserveCapacity(Self.capacity)
        open.reserveCapacity(Self.openCapacity)
    }

    /// The write with `ordinal` was handed to libpipewire at `sent`: a span opens if a request's
    /// turn caused it (once per request).
    mutating func wrote(ordinal: UInt64, sent: UInt64) {
        guard let read = requestRead else { return }
        requestRead = nil
        if open.count == Self.openCapacity { open.removeFirst() }
        open.append((ordinal, read, sent))
    }

    /// The echo of the write with `ordinal` came (every write before it is settled with it); the
    /// clock is read only when that write is an open span's.
    mutating func echoed(ordinal: UInt64, now: () -> UInt64) {
        guard let first = open.first, first.ordinal <= ordinal else { return }
        // Writes before it were settled with it (coalesced): they had no echo of their own to time.
        let settled = open.prefix { $0.ordinal <= ordinal }.count
        let span = open[settled - 1]
        open.removeFirst(settled)
        guard span.ordinal == ordinal else { return }
        record(ControlWire.SwitchSpanEntry(read: span.read, sent: span.sent, echo: now()))
    }

    /// The writes in flight will never echo (metadata gone, a reconnection, a failed write).
    mutating func drop() { open.removeAll(keepingCapacity: true) }

    /// The spans kept, oldest first.
    var spans: [ControlWire.SwitchSpanEntry] {
        storage.count < Self.capacity ? storage : Array(storage[next...] + storage[..<next])
    }

    private mutating func record(_ span: ControlWire.SwitchSpanEntry) {
        if storage.count < Self.capacity { storage.append(span) } else { storage[next] = span }
        next = (next + 1) % Self.capacity
    }
}
