@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotCommands
import EarshotDaemon
import Foundation
import PipeWireTestSupport

/// A control-socket subscription, read on a thread of its own so a test can wait for the
/// next event of a kind with a deadline.
final class EventSubscription: @unchecked Sendable {
    private let client: ControlClient

    init(socket: String) throws {
        client = try ControlClient.connect(path: socket)
        guard case .success = try client.request(.subscribe, reply: ControlWire.SubscribeResult.self) else { throw FixtureError("subscribe refused") }
    }

    /// The next event named `name` (`playback`, `route-change`, `host-addresses`) for which
    /// `matching` holds, skipping every other event; fails after `timeout`.
    func next(_ name: String, timeout: Duration = .seconds(10), where matching: @escaping @Sendable (JSONValue) -> Bool = { _ in true })
        async throws -> JSONValue
    {
        let deadline = ContinuousClock.now + timeout
        return try await offPool { [self] in
            while true {
                let event: (event: ControlWire.Event, json: JSONValue)
                do {
                    event = try self.client.nextEvent(until: deadline)
                } catch let error as ControlClientError {
                    guard case .timedOut = error else { throw error }
                    throw FixtureError("no \(name) event as expected within \(timeout)")
                }
                if event.event.name == name, matching(event.json) { return event.json }
            }
        }
    }

    /// The next event of any kind, for a test that must see that nothing else came first.
    func nextAny(timeout: Duration = .seconds(10)) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        return try await offPool { [self] in try self.client.nextEvent(until: deadline).json }
    }
}

extension ControlText {
    /// `earshot watch`'s line for an event a test holds as JSON (its `event` among `fields`).
    static func event(name: String, _ fields: [String: JSONValue]) -> String {
        let line = Data(JSONValue.object(fields).canonicalText.utf8)
        guard case .event(let decoded, _)? = try? ControlWire.message(from: line), decoded.name == name else {
            return "not a \(name) event: \(JSONValue.object(fields).canonicalText)"
        }
        return event(decoded)
    }
}
