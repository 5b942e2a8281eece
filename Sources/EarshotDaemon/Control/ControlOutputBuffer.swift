/// What a connection has to write and the socket has not taken yet. Bytes are appended at the
/// end and taken from the front; what was taken is dropped in one go (not per write) once it is
/// at least half the storage, so a reader that never quite catches up holds what it has not
/// read, never everything it was ever sent.
struct ControlOutputBuffer {
    private var storage: [UInt8] = []
    /// Where the bytes not yet taken start.
    private var start = 0

    /// Bytes appended and not yet taken.
    var unsentCount: Int { storage.count - start }
    var isEmpty: Bool { start == storage.count }
    /// What the buffer holds, taken bytes included (for tests: the bound on that).
    var storageCount: Int { storage.count }

    mutating func append(_ bytes: some Collection<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Calls `body` with the bytes not yet taken.
    func withUnsent<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    /// The first `count` unsent bytes were written.
    mutating func consume(_ count: Int) {
        precondition(count >= 0 && count <= unsentCount, "consumed more than was there")
        start += count
        if start == storage.count {
            // Drained: keep a small buffer's memory for the next reply, give a large one back.
            storage.removeAll(keepingCapacity: storage.capacity <= 64 * 1024)
            start = 0
        } else if start >= 4096, start * 2 >= storage.count {
            storage.removeFirst(start)
            start = 0
        }
    }
}
