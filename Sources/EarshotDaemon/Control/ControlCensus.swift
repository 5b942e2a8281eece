import Synchronization

/// What one control server's connections hold, counted as it happens (from any thread): the
/// connection and session objects not yet freed and the bytes queued for clients. `status`
/// reports it (`diagnostics.control`), so a test can tell memory held by something still alive
/// from memory the allocator keeps after it was freed (issue 38).
final class ControlCensus: Sendable {
    /// Connections accepted (every connection object made), never less.
    let accepted = Atomic<Int>(0)
    let connectionObjects = Atomic<Int>(0)
    let sessionObjects = Atomic<Int>(0)
    let unsentBytes = Atomic<Int>(0)
}
