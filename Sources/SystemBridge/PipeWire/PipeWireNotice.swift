import AudioGraph

/// Something a connection tells its owner that is not a graph change: what to say in the log.
public enum PipeWireNotice: Sendable, Equatable, CustomStringConvertible {
    /// A device's params (its routes) were asked for and not given within the connection's
    /// deadline: its exporter (`client.id`) may be stopped or hung. The graph goes on without
    /// them (the device keeps the routes last read, or none); they count when they come.
    /// Said once per silence, not again until the device has answered.
    case deviceNotAnswering(device: ObjectID, name: String?, exporter: ObjectID?, waited: Duration)
    /// A device that did not answer in time has answered: its routes are in the graph.
    case deviceAnswered(device: ObjectID, name: String?)

    public var description: String {
        switch self {
        case .deviceNotAnswering(let device, let name, let exporter, let waited):
            let client = exporter.map { " (its exporter, client \($0), may be stopped or hung)" } ?? ""
            return "device \(device)\(name.map { " \"\($0)\"" } ?? "") did not answer for its routes within \(waited)\(client): deciding without them until it does"
        case .deviceAnswered(let device, let name):
            return "device \(device)\(name.map { " \"\($0)\"" } ?? "") answered: its routes count again"
        }
    }
}
