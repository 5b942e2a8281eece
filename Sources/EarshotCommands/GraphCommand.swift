import ArgumentParser
import AudioGraph
import FoundationEssentials
import SystemBridge

/// `earshot graph [--json]`: the live graph in routing terms.
struct GraphCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Show the live PipeWire graph as routing sees it: sinks, streams, the default sink.")

    @Flag(help: "Print stable JSON instead of a table.")
    var json = false

    @Option(help: "PipeWire remote: a socket name or an absolute socket path (default: PIPEWIRE_REMOTE, then pipewire-0).")
    var remote: String?

    func run() async throws {
        let graph: Graph
        do {
            let connection = try await PipeWireConnection.connect(remote: remote)
            graph = connection.snapshot()
            connection.close()
        } catch {
            printError("earshot: \(error)")
            throw ExitCode(3)
        }
        let view = RoutingView(graph)
        print(json ? try StableJSON.encode(view) : view.renderText())
    }
}

/// JSON with sorted keys and no escaped slashes, so output diffs cleanly between runs.
enum StableJSON {
    static func encode<Value: Encodable>(_ value: Value, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

func printError(_ message: String) {
    Console.error((message + "\n"))
}
