import RoutingPolicy
import WireFields

// The events of calls (docs/policy.md §8 `bluetooth-microphone = "calls"`): a capture stream
// Earshot moved, and where calls record from. Their fields are the engine's records'
// (`StreamMove`), declared once.
extension ControlWire {
    /// `stream-moved`: Earshot pointed a call at the worn headset's microphone, gave a stream
    /// back to the default source, or removed a stale target. One per move of a decision,
    /// after its route changes.
    public struct StreamMovedEvent: WireRecord, Hashable {
        public static let name = "stream-moved"
        public var at: Int64
        public var move: StreamMove

        public init(at: Int64, move: StreamMove) {
            self.at = at
            self.move = move
        }

        /// `stream #401 Some Softphone (Communication) -> bluez_input.… (call)`, `-> default
        /// source (back)`: `earshot watch`'s line and the daemon's log.
        public var sentence: String {
            let label = ControlWire.streamLabel(stream: UInt64(move.stream), application: move.application, role: move.role)
            return "\(label) -> \(move.to ?? "default source") (\(move.kind.rawValue))"
        }

        public static let wireBlank = StreamMovedEvent(at: 0, move: .wireBlank)
        public static let wireFields: [WireField<Self>] = [
            .inline(\.move),
            .field("at", \.at, "wall-clock milliseconds since the Unix epoch"),
        ]
    }

    /// `call-source`: where calls record from changed — the worn headset's microphone, kept
    /// out of the default source, or none of their own (calls then record from the default
    /// source as any recording). Sent before the `stream-moved` events of the same decision.
    public struct CallSourceEvent: WireRecord, Hashable {
        public static let name = "call-source"
        public var at: Int64
        public var previous: String?
        public var current: String?

        public init(at: Int64, previous: String?, current: String?) {
            self.at = at
            self.previous = previous
            self.current = current
        }

        /// `calls default source -> bluez_input.… (keeps A2DP: calls only)`.
        public var sentence: String {
            "calls \(previous ?? "default source") -> " + (current.map { ControlWire.callSourceText($0) } ?? "default source")
        }

        public static let wireBlank = CallSourceEvent(at: 0, previous: nil, current: nil)
        public static let wireFields: [WireField<Self>] = [
            .nullable("previous", \.previous, "the Bluetooth microphone calls recorded from before (`node.name`); null: the default source"),
            .nullable("current", \.current, "the one they record from now; null: the default source"),
            .field("at", \.at, "wall-clock milliseconds since the Unix epoch"),
        ]
    }

    /// `stream #401 Some Softphone (Communication)`: a capture stream as watch and status name it.
    public static func streamLabel(stream: UInt64, application: String?, role: String?) -> String {
        "stream #\(stream)" + (application.map { " \($0)" } ?? "") + (role.map { " (\($0))" } ?? "")
    }

    /// `bluez_input.… (keeps A2DP: calls only)`: where calls go, and why it is not the default
    /// source.
    public static func callSourceText(_ source: String) -> String {
        "\(source) (keeps A2DP: calls only)"
    }
}
