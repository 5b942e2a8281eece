/// What a connection has to write and the socket has not taken yet. Bytes are appended at the
/// end and taken from the front; what was taken is dropped in one go (not per write) once it is
/// at least half the storage, so a reader that never quite catches up holds what it has not
/// read, never everything it was ever sent. Appends can be tagged (a subscription's events), and
/// the tagged bytes not yet taken are counted apart: a subscriber's bound is on its events, not
/// on the replies to what it asked.
struct ControlOutputBuffer {
    private var storage: [UInt8] = []
    /// Where the bytes not yet taken start.
    private var start = 0
    /// Bytes ever appended and taken: the tagged appends' ends are on this count.
    private var appendedTotal = 0
    private var takenTotal = 0
    /// The tagged appends not wholly taken, oldest first (from `firstTagged` on): where each ends
    /// and its size.
    private var tagged: [(end: Int, size: Int)] = []
    private var firstTagged = 0

    /// Bytes appended and not yet taken.
    var unsentCount: Int { storage.count - start }
    var isEmpty: Bool { start == storage.count }
    /// Of those, the tagged appends' (one partly taken counts whole).
    private(set) var unsentTaggedCount = 0
    /// What the buffer holds, taken bytes included (for tests: the bound on that).
    var storageCount: Int { storage.count }

    mutating func append(_ bytes: some Collection<UInt8>, tagged isTagged: Bool = false) {
        let count = bytes.count
        storage.append(contentsOf: bytes)
        appendedTotal += count
        if isTagged, count > 0 {
            tagged.append((appendedTotal, count))
            unsentTaggedCount += count
        }
    }

    /// Calls `body` with the bytes not yet taken.
    func withUnsent<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    /// The first `count` unsent bytes were written. Returns the tagged bytes that are wholly
    /// taken now.
    @discardableResult
    mutating func consume(_ count: Int) -> Int {
        precondition(count >= 0 && count <= unsentCount, "consumed more than was there")
        start += count
        takenTotal += count
        var done = 0
        while firstTagged < tagged.count, tagged[firstTagged].end <= takenTotal {
            done += tagged[firstTagged].size
            firstTagged += 1
        }
        unsentTaggedCount -= done
        Self.dropTaken(&tagged, before: &firstTagged, smallest: 64)
        // Drained, a small buffer's memory is kept for the next reply; a large one goes back.
        Self.dropTaken(&storage, before: &start, smallest: 4096)
        return done
    }

    /// Drops `elements` before `index` once they are all of them, or at least `smallest` and
    /// half: the work is paid for by the appends that made them. Emptied, the array keeps its
    /// capacity only up to `smallest`.
    private static func dropTaken<Element>(_ elements: inout [Element], before index: inout Int, smallest: Int) {
        if index == elements.count {
            elements.removeAll(keepingCapacity: elements.capacity <= smallest)
            index = 0
        } else if index >= smallest, index * 2 >= elements.count {
            elements.removeFirst(index)
            index = 0
        }
    }
}
