import NIOCore

/// What the framing hands on: a complete line (without its newline), or the news that a line
/// went past the limit, after which the connection's input is ignored.
enum ControlFrame: Sendable {
    case line(ByteBuffer)
    case tooLong
}

/// Splits input at newlines with a bound on the line length, so a peer that never sends a
/// newline cannot make the daemon buffer without end. Bytes after the last newline when the
/// input ends are dropped: a request cut off mid-way is not a request.
struct ControlLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ControlFrame

    let maximumLineBytes: Int
    /// How far the current partial line has been searched for a newline, so a long line
    /// arriving in small reads is scanned once, not once per read.
    private var scanned = 0
    private var overflowed = false

    init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if overflowed {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let searchFrom = view.startIndex + scanned
        if let newline = view[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - view.startIndex
            scanned = 0
            if length > maximumLineBytes { return overflow(context: context, buffer: &buffer) }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        scanned = view.count
        if view.count > maximumLineBytes { return overflow(context: context, buffer: &buffer) }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A half message at the end of the input: dropped.
        buffer.moveReaderIndex(to: buffer.writerIndex)
        scanned = 0
        return .needMoreData
    }

    private mutating func overflow(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        overflowed = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        context.fireChannelRead(wrapInboundOut(.tooLong))
        return .needMoreData
    }
}
