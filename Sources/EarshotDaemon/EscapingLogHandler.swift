import AudioGraph
import Logging

/// The daemon's log handler: another handler (the stream to stderr) with every message
/// escaped by `TerminalText.escape` first. Log lines quote node names, port labels, accessory
/// and reporter names and errors built of them, which any PipeWire or control client chooses:
/// escaped here, once for every logger call, none can print a line break (a forged log line)
/// or a terminal's escape sequence.
public struct EscapingLogHandler: LogHandler {
    public var wrapped: any LogHandler

    public init(_ wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        let text = event.message.description
        if TerminalText.needsEscaping(text) { event.message = "\(TerminalText.escape(text))" }
        wrapped.log(event: event)
    }
}
