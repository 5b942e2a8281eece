/// Cuts a Galaxy Buds RFCOMM byte stream (frames split or run together across reads) into
/// frames, holding at most `DriverLimits.maxGalaxyBufferedBytes`.
///
/// After anything it cannot use it resynchronises on the next start marker, giving up only the
/// marker it stood on, so a real frame hidden behind a false start is never lost. Each byte is
/// looked at a bounded number of times, so the cost is linear in the input.
struct GalaxyBudsFrameReader: Sendable {
    let framing: GalaxyBudsFraming
    private var buffer: [UInt8] = []
    /// Bytes before `head` are consumed; dropped in bulk by `compact()` to keep removal cheap.
    private var head = 0

    init(framing: GalaxyBudsFraming) {
        self.framing = framing
    }

    var bufferedCount: Int { buffer.count - head }

    mutating func read(_ chunk: [UInt8], counters: inout DriverCounters) -> [GalaxyBudsFrame] {
        var frames: [GalaxyBudsFrame] = []
        var offset = 0
        repeat {
            let room = DriverLimits.maxGalaxyBufferedBytes - bufferedCount
            let take = min(room, chunk.count - offset)
            buffer.append(contentsOf: chunk[offset..<(offset + take)])
            offset += take
            extractFrames(into: &frames, counters: &counters)
            if bufferedCount >= DriverLimits.maxGalaxyBufferedBytes {
                // Unreachable while a whole frame fits the cap; kept so the loop always ends.
                counters.skippedBytes += bufferedCount
                head = buffer.count
            }
            compact()
        } while offset < chunk.count
        return frames
    }

    private enum Header {
        case frame(size: Int, isResponse: Bool, isFragment: Bool, flags: UInt16)
        case malformed
        case oversized
    }

    private func header(_ first: UInt8, _ second: UInt8) -> Header {
        let size: Int
        var isResponse = false
        var isFragment = false
        var flags: UInt16 = 0
        switch framing {
        case .legacy:
            isResponse = first == 1
            size = Int(second)
        case .current:
            let value = UInt16(first) | UInt16(second) << 8
            // The size is the low 10 bits, as the reference client reads it (a real Buds Pro
            // rev 10 status frame's header is 0x0C29: 41 bytes, flags 0x0C00). The bits no
            // note names are kept as flags, never a reason to drop a frame whose end marker
            // and CRC hold.
            typealias H = GalaxyBudsFrame.Header
            size = Int(value & H.sizeMask)
            isResponse = value & H.response != 0
            isFragment = value & H.fragment != 0
            flags = value & H.unnamedFlags
        }
        if size > DriverLimits.maxGalaxyFrameSize { return .oversized }
        // The size counts id + CRC at least.
        return size < 3 ? .malformed : .frame(size: size, isResponse: isResponse, isFragment: isFragment, flags: flags)
    }

    private mutating func extractFrames(into frames: inout [GalaxyBudsFrame], counters: inout DriverCounters) {
        while head < buffer.count {
            guard buffer[head] == framing.startMarker else {
                let next = buffer[head...].firstIndex(of: framing.startMarker) ?? buffer.count
                counters.skippedBytes += next - head
                head = next
                continue
            }
            guard bufferedCount >= 3 else { return }
            let size: Int, isResponse: Bool, isFragment: Bool, flags: UInt16
            switch header(buffer[head + 1], buffer[head + 2]) {
            case .oversized:
                counters.packets += 1
                counters.oversized += 1
                head += 1
                continue
            case .malformed:
                counters.packets += 1
                counters.malformed += 1
                head += 1
                continue
            case let .frame(frameSize, response, fragment, headerFlags):
                (size, isResponse, isFragment, flags) = (frameSize, response, fragment, headerFlags)
            }
            let total = size + 4
            guard bufferedCount >= total else { return }
            counters.packets += 1
            let end = head + total - 1
            guard buffer[end] == framing.endMarker else {
                counters.malformed += 1
                head += 1
                continue
            }
            let body = buffer[(head + 3)..<(end - 2)]
            let crc = UInt16(buffer[end - 2]) | UInt16(buffer[end - 1]) << 8
            guard CRC16XModem.checksum(body) == crc else {
                counters.badCRC += 1
                head += 1
                continue
            }
            head += total
            if flags != 0 { counters.flaggedFrames += 1 }
            if isFragment {
                // Fragments carry firmware and dumps, never status: not reassembled.
                counters.ignored += 1
                continue
            }
            frames.append(GalaxyBudsFrame(id: body[body.startIndex], payload: Array(body.dropFirst()), isResponse: isResponse, headerFlags: flags))
        }
    }

    private mutating func compact() {
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
    }
}
