import FoundationEssentials

/// Standard output in 64 KiB writes: eval prints a line per decision, and a script can have
/// hundreds of thousands.
final class BufferedOutput {
    private var buffer = Data()

    func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        Console.output(bytes: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
