@testable import EarshotDaemon
import WireFields
import TestScheduling
import Testing

/// The control connection's two buffers, as pure values: the line framer and the output buffer.
@Suite("control socket buffers", .blockingCalls)
struct ControlBufferTests {
    private func frames(_ chunks: [String], limit: Int = 16) -> [String] {
        var framer = ControlLineFramer(maximumLineBytes: limit)
        var out: [String] = []
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBytes { bytes in
                framer.take(bytes) { frame in
                    switch frame {
                    case .line(let line): out.append(String(decoding: line, as: UTF8.self))
                    case .tooLong: out.append("<too long>")
                    }
                }
            }
        }
        return out
    }

    @Test("lines split anywhere come out whole and in order; empty lines are lines; the tail without a newline waits")
    func framing() {
        #expect(frames(["ab\ncd", "e\n\nf", "g"]) == ["ab", "cde", "", ])
        #expect(frames(["a", "b", "c", "\n"]) == ["abc"])
    }

    @Test("a line of exactly the limit passes; one byte more, in one read or over many, is refused once and nothing after it is framed")
    func limit() {
        let sixteen = String(repeating: "x", count: 16)
        #expect(frames([sixteen + "\n"]) == [sixteen])
        #expect(frames([sixteen + "x\nok\n"]) == ["<too long>"])
        #expect(frames(Array(repeating: "x", count: 17) + ["\nok\n"]) == ["<too long>"])
        #expect(frames(["0123456789", "0123456789"]) == ["<too long>"])
    }

    @Test("the output buffer hands out what is unsent, in order, however the socket takes it")
    func outputOrder() {
        var buffer = ControlOutputBuffer()
        buffer.append(Array("hello ".utf8))
        buffer.append(Array("world".utf8))
        var written: [UInt8] = []
        for step in [1, 4, 3, 3] {
            buffer.withUnsent { written.append(contentsOf: $0.prefix(step)) }
            buffer.consume(step)
        }
        #expect(String(decoding: written, as: UTF8.self) == "hello world")
        #expect(buffer.isEmpty && buffer.unsentCount == 0 && buffer.storageCount == 0)
    }

    @Test("a reader that never catches up: the buffer holds at most about twice what is unsent, not everything ever sent")
    func outputBounded() {
        var buffer = ControlOutputBuffer()
        let line = [UInt8](repeating: 0x41, count: 300)
        var most = 0
        for _ in 0..<100_000 {
            buffer.append(line)
            // The socket takes a little less than comes: the backlog stays, the sent part goes.
            buffer.consume(min(buffer.unsentCount, 299))
            most = max(most, buffer.storageCount)
        }
        #expect(buffer.unsentCount == 100_000)
        #expect(most <= 2 * buffer.unsentCount + 4096 + line.count, "held \(most) bytes for \(buffer.unsentCount) unsent")
    }

    @Test("tagged bytes (events) are counted apart: a tagged append counts until it is wholly taken, untagged ones never")
    func taggedCount() {
        var buffer = ControlOutputBuffer()
        buffer.append([UInt8](repeating: 1, count: 10))
        buffer.append([UInt8](repeating: 2, count: 5), tagged: true)
        buffer.append([UInt8](repeating: 3, count: 7))
        buffer.append([UInt8](repeating: 4, count: 3), tagged: true)
        #expect(buffer.unsentTaggedCount == 8)
        #expect(buffer.consume(12) == 0)
        #expect(buffer.unsentTaggedCount == 8)
        #expect(buffer.consume(3) == 5)
        #expect(buffer.unsentTaggedCount == 3)
        #expect(buffer.consume(9) == 0)
        #expect(buffer.consume(1) == 3)
        #expect(buffer.unsentTaggedCount == 0 && buffer.isEmpty)
    }
}
