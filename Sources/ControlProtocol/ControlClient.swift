import AudioGraph
import FoundationEssentials
import RoutingPolicy
import SystemBridge
import SystemPackage

/// A client of the daemon's control socket for the CLI: blocking, one request at a time, then
/// (for `watch`) the events of a subscription. Speaks the protocol through ControlWire.
public final class ControlClient {
    public let path: String
    private let socket: UnixStreamSocket
    private var pending: [UInt8] = []
    private var nextID: Int64 = 1

    /// How long a reply may take before the daemon counts as not reachable.
    public static let replyTimeout: Duration = .seconds(10)
    /// How long a connect waits for the daemon to accept it.
    static let connectTimeout: Duration = .seconds(5)

    private init(path: String, socket: UnixStreamSocket) {
        self.path = path
        self.socket = socket
    }

    public static func connect(path: String) throws(ControlClientError) -> ControlClient {
        do {
            return ControlClient(path: path, socket: try UnixStreamSocket.connect(path: path, timeout: connectTimeout))
        } catch {
            if error.errno == .resourceTemporarilyUnavailable {
                throw .unreachable(
                    path: path, reason: "the daemon did not accept the connection within \(connectTimeout) (busy, or out of descriptors: see its log)")
            }
            throw .unreachable(path: path, reason: error.errno.description)
        }
    }

    /// Sends one request and waits for its reply: its result (a `ControlWire.AccessoryResult`,
    /// `StatusResult`, …), or the daemon's refusal. Waits at most `timeout` (nil: as long as it
    /// takes, for a reply the daemon may hold back: `record` before its first graph).
    public func request<Body: Encodable & Sendable, Reply: Decodable>(
        _ operation: ControlOperation, _ body: Body, reply: Reply.Type, timeout: Duration? = ControlClient.replyTimeout
    ) throws(ControlClientError) -> Result<Reply, AccessoryError> {
        let id = JSONValue.integer(nextID)
        nextID += 1
        try send(ControlWire.line(ControlWire.Request(operation, id: id, body)))
        let deadline = timeout.map { ContinuousClock.now + $0 }
        // Events of an earlier subscribe may come before the reply: they are not this reply.
        while true {
            switch try nextMessage(deadline: deadline) {
            case .success(id: let replyID, let line) where replyID == id:
                do {
                    return .success(try ControlWire.result(Reply.self, from: line))
                } catch {
                    throw .protocolViolation(path: path, reason: error.description)
                }
            case .failure(id: let replyID, let error) where replyID == id || replyID == nil: return .failure(error)
            case .success, .failure, .event, .recorded: continue
            }
        }
    }

    /// A request that takes no fields (list, status, subscribe, record).
    public func request<Reply: Decodable>(_ operation: ControlOperation, reply: Reply.Type, timeout: Duration? = ControlClient.replyTimeout)
        throws(ControlClientError) -> Result<Reply, AccessoryError>
    {
        try request(operation, ControlWire.NoFields(), reply: reply, timeout: timeout)
    }

    /// The next event of a subscription, and its JSON as sent; waits until `deadline` (nil: as
    /// long as it takes).
    public func nextEvent(until deadline: ContinuousClock.Instant? = nil) throws(ControlClientError) -> (event: ControlWire.Event, json: JSONValue) {
        while true {
            if case .event(let event, let json) = try nextMessage(deadline: deadline) { return (event, json) }
        }
    }

    /// The next line of a recording (`record`); waits until `deadline` (nil: as long as it
    /// takes). Throws `.timedOut` at the deadline, `.lost` when the daemon ends it.
    public func nextRecordedLine(until deadline: ContinuousClock.Instant? = nil) throws(ControlClientError) -> JSONValue {
        while true {
            if case .recorded(let line) = try nextMessage(deadline: deadline) { return line }
        }
    }

    /// The socket, for waiting on it next to other descriptors (`earshot report`).
    public var socketDescriptor: Int32 { socket.descriptor }

    /// Called when the socket is readable while no request is out: reads what is there
    /// (kept for the next request) and says whether the daemon is still on the other end.
    public func stillOpen() -> Bool {
        while true {
            do {
                guard let chunk = try socket.receiveAvailable() else { return true }
                if chunk.isEmpty { return false }
                pending.append(contentsOf: chunk)
            } catch {
                return false
            }
        }
    }

    private func send(_ data: Data) throws(ControlClientError) {
        do {
            try socket.sendAll(data)
        } catch {
            throw .lost(path: path, reason: error.errno.description)
        }
    }

    private func nextMessage(deadline: ContinuousClock.Instant?) throws(ControlClientError) -> ControlMessage {
        let line = try readLine(deadline: deadline)
        do {
            return try ControlWire.message(from: line)
        } catch {
            throw .protocolViolation(path: path, reason: error.description)
        }
    }

    private func readLine(deadline: ContinuousClock.Instant?) throws(ControlClientError) -> Data {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                return line
            }
            var timeout: Duration?
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { throw .timedOut(path: path, after: Self.replyTimeout) }
                timeout = left
            }
            let chunk: [UInt8]
            do {
                guard try !Readiness.wait([socket.descriptor], timeout: timeout).isEmpty else { continue }
                chunk = try socket.receive()
            } catch {
                throw .lost(path: path, reason: error.errno.description)
            }
            if chunk.isEmpty { throw .lost(path: path, reason: "the daemon closed the connection") }
            pending.append(contentsOf: chunk)
        }
    }
}

/// Why the daemon could not be talked to (exit 3), as opposed to a refusal (exit 1).
public enum ControlClientError: Error, CustomStringConvertible {
    case unreachable(path: String, reason: String)
    case lost(path: String, reason: String)
    case timedOut(path: String, after: Duration)
    case protocolViolation(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreachable(let path, let reason):
            "the earshot daemon is not reachable at \(path) (\(reason)): start it with `earshot daemon`, or give its socket with --socket"
        case .lost(let path, let reason):
            "lost the connection to the earshot daemon at \(path): \(reason)"
        case .timedOut(let path, let after):
            "the earshot daemon at \(path) did not answer within \(after)"
        case .protocolViolation(let path, let reason):
            "the program at \(path) does not speak the earshot control protocol: \(reason)"
        }
    }
}
