/// What the framing hands on: a complete line (without its newline), or the news that a line
/// went past the limit, after which the connection's input is ignored.
enum ControlFrame: Sendable {
    case line([UInt8])
    case tooLong
}

/// Splits input at newlines with a bound on the line length, so a peer that never sends a
/// newline cannot make the daemon buffer without end. Each byte is scanned once, however small
/// the reads a long line arrives in. Bytes after the last newline when the input ends are
/// dropped: a request cut off mid-way is not a request.
struct ControlLineFramer {
    let maximumLineBytes: Int
    /// The line begun and not yet ended by a newline.
    private var partial: [UInt8] = []
    private var overflowed = false

    init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// The frames `bytes` completes, in order, after what came before; nothing after an overflow.
    mutating func take(_ bytes: UnsafeRawBufferPointer, _ emit: (ControlFrame) -> Void) {
        var rest = bytes[...]
        while !overflowed, !rest.isEmpty {
            guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")) else {
                guard partial.count + rest.count <= maximumLineBytes else { return overflow(emit) }
                partial.append(contentsOf: rest)
                return
            }
            guard partial.count + (newline - rest.startIndex) <= maximumLineBytes else { return overflow(emit) }
            var line = partial
            partial = []
            line.append(contentsOf: rest[..<newline])
            emit(.line(line))
            rest = rest[(newline + 1)...]
        }
    }

    /// The input ended: a partial line is dropped.
    mutating func end() {
        partial = []
    }

    private mutating func overflow(_ emit: (ControlFrame) -> Void) {
        overflowed = true
        partial = []
        emit(.tooLong)
    }
}
