import AudioGraph
import Logging
import SystemBridge

/// The live source of graph inputs: keeps a connection to PipeWire until the daemon stops,
/// reconnecting with a short backoff while PipeWire is away, and submits `.connected` (from
/// the connection's `.ready` graph), `.graphChanged` bursts and `.disconnected`. Each submit
/// waits until the daemon has handled it, so at most one burst is in flight.
struct GraphFeed: Sendable {
    let remote: String?
    let logger: Logger

    func run(into inputs: InputQueue) async {
        var backoff: Duration = .milliseconds(50)
        var reportedAbsence = false
        while !inputs.isFinished {
            let connection: PipeWireConnection
            do {
                connection = try await PipeWireConnection.connect(remote: remote, applicationName: "earshot")
            } catch {
                if !reportedAbsence { logger.warning("PipeWire not reachable (\(error)); retrying") }
                reportedAbsence = true
                try? await Task.sleep(for: backoff)  // retry backoff while PipeWire is down
                backoff = min(backoff * 2, .milliseconds(500))
                continue
            }
            backoff = .milliseconds(50)
            reportedAbsence = false
            await feed(from: connection, into: inputs)
            guard case .done = await inputs.submit(.disconnected(connection)) else {
                connection.close()
                return
            }
        }
    }

    /// Changes before `.ready` built its graph: the daemon starts from that graph, not by
    /// replaying them.
    private func feed(from connection: PipeWireConnection, into inputs: InputQueue) async {
        var started = false
        for await batch in connection.events {
            var changes: [GraphChange] = []
            for event in batch {
                switch event {
                case .ready(let graph):
                    started = true
                    guard case .done = await inputs.submit(.connected(connection, graph)) else { return }
                case .changed(let change) where started:
                    changes.append(change)
                case .notice(let notice):
                    // A device that does not answer is said once (and when it answers again).
                    let line = TerminalText.escape("\(notice)")
                    if case .deviceNotAnswering = notice { logger.warning("\(line)") } else { logger.notice("\(line)") }
                case .changed, .disconnected:
                    break
                }
            }
            if !changes.isEmpty {
                guard case .done = await inputs.submit(.graphChanged(changes)) else { return }
            }
        }
    }
}
