import AudioGraph

/// What a connection reports, in order, in the batches of `PipeWireConnection.events`.
public enum PipeWireEvent: Sendable, Equatable {
    /// One change to the graph; apply it to a `Graph` to follow along.
    case changed(GraphChange)
    /// The initial sync finished: `graph` holds every object that existed at connect time,
    /// with its info. Sent once, after the changes that built it.
    case ready(Graph)
    /// Something to say (a device that does not answer); the graph is unchanged.
    case notice(PipeWireNotice)
    /// The daemon went away (or the connection broke). No event follows; connect again.
    case disconnected(PipeWireError)
}
