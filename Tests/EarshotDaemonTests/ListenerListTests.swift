import AudioGraph
import Logging
import RoutingPolicy
import Synchronization
import Testing

@testable import EarshotDaemon

/// The one way the daemon keeps listeners: bounded, in order, taken out by token, closed at stop.
struct ListenerListTests {
    @Test("listeners come in order up to the capacity; one taken out by its token frees its place")
    func capacityAndOrder() {
        var list = ListenerList<String>(capacity: 2)
        let first = list.add("a")
        #expect(list.add("b") != nil)
        #expect(list.add("c") == nil, "full")
        #expect(list.listeners == ["a", "b"])
        list.remove(try! #require(first))
        #expect(list.add("c") != nil)
        #expect(list.listeners == ["b", "c"])
    }

    @Test("removeAll leaves the list open; close takes no more")
    func removeAllAndClose() {
        var list = ListenerList<Int>()
        _ = list.add(1)
        #expect(list.removeAll() == [1])
        #expect(list.add(2) != nil)
        #expect(list.close() == [2])
        #expect(list.isClosed && list.isEmpty)
        #expect(list.add(3) == nil)
    }

    @Test("a once-listener runs when it happens, or at once when added after; past the capacity never")
    func once() async {
        let ran = Mutex<[String]>([])
        let (done, doneContinuation) = AsyncStream.makeStream(of: Void.self)
        var once = OnceListeners(capacity: 2)
        for name in ["early", "second", "third: past the capacity"] {
            once.add {
                ran.withLock { $0.append(name) }
                doneContinuation.yield()
            }
        }
        #expect(!once.happened)
        once.happen()
        once.happen()
        once.add {
            ran.withLock { $0.append("late") }
            doneContinuation.yield()
        }
        var count = 0
        for await _ in done {
            count += 1
            if count == 3 { break }
        }
        #expect(Set(ran.withLock { $0 }) == ["early", "second", "late"])
    }

    @Test("stream listeners: each gets every element; one cut off or gone is taken out; none after close")
    func streams() async {
        let listeners = StreamListeners<Int>()
        let bounded = listeners.subscribe(bufferingPolicy: .bufferingOldest(1))
        var gone: AsyncStream<Int>? = listeners.subscribe(bufferingPolicy: .unbounded)
        let kept = listeners.subscribe(bufferingPolicy: .unbounded)
        #expect(listeners.count == 3)
        gone = nil
        #expect(gone == nil)
        #expect(listeners.count == 2, "a dropped stream's listener is taken out")
        listeners.yield(1)
        listeners.yield(2)  // the bounded one's buffer is full: it is cut off
        #expect(listeners.count == 1)
        listeners.close()
        #expect(listeners.isEmpty)
        var late: [Int] = []
        for await value in listeners.subscribe(bufferingPolicy: .unbounded) { late.append(value) }
        #expect(late.isEmpty, "a stream after close ends at once")
        var first: [Int] = []
        for await value in bounded { first.append(value) }
        var all: [Int] = []
        for await value in kept { all.append(value) }
        #expect(first == [1])
        #expect(all == [1, 2])
    }
}

/// Each part classifies the graph changes it observes itself (`GraphChangeObserver`).
struct GraphChangeObserverTests {
    static let logger = Logger(label: "test")

    static func graph(configured: String? = nil) -> Graph {
        var graph = Graph()
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        if let configured {
            metadata.entries[MetadataKey(subject: 0, key: Graph.configuredSinkKey)] = MetadataEntry(
                subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: configured))
        }
        graph.apply(.metadata(metadata))
        return graph
    }

    static func turn(_ graph: Graph, session: GraphSession = GraphSession(logger: logger), current: String? = "speakers", at now: Milliseconds = 10_000) -> GraphTurn {
        GraphTurn(graph: graph, session: session, currentDefault: current, currentSource: nil, now: now)
    }

    static func configured(_ name: String) -> GraphChange {
        .metadataProperty(metadata: 30, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: name))
    }

    @Test("each change has one kind, and the kinds are distinct bits")
    func kinds() {
        let changes: [GraphChange] = [
            .node(Node(id: 1, props: [:])), .port(Port(id: 2, direction: .input, props: [:])), .link(Link(id: 3, outputNode: 1, outputPort: 2, inputNode: 8, inputPort: 9)),
            .device(Device(id: 4, props: [:])), .client(Client(id: 5, props: [:])), .metadata(Metadata(id: 6)), Self.configured("x"), .removed(7),
        ]
        let kinds = changes.map(\.kind)
        #expect(Set(kinds.map(\.rawValue)).count == changes.count)
        #expect(kinds.allSatisfy { $0.rawValue.nonzeroBitCount == 1 })
    }

    @Test("the apply stage: a configured default Earshot did not write is a pick; the current one is not")
    func pick() {
        let stage = ApplyStage(logger: Self.logger)
        let change = Self.configured("headset")
        let after = Self.graph(configured: "headset")
        #expect(stage.observedKinds.contains(change.kind))
        guard case .userSelectedDefault("headset") = stage.graphDidChange(change, in: Self.turn(after)) else {
            Issue.record("not taken as a pick")
            return
        }
        #expect(stage.graphDidChange(change, in: Self.turn(after, current: "headset")) == nil)
    }

    @Test("the apply stage: what a new session manager's `default` metadata says first is its start-up, not a pick")
    func sessionManagerStartUp() {
        let stage = ApplyStage(logger: Self.logger)
        let arrival = GraphChange.metadata(Metadata(id: 30, props: ["metadata.name": "default"]))
        stage.graphWillChange(arrival, in: Self.turn(Graph(), at: 10_000))
        let change = Self.configured("headset")
        #expect(stage.graphDidChange(change, in: Self.turn(Self.graph(configured: "headset"), at: 11_000)) == nil)
    }

    @Test("the session re-reads the mode as clients come and go; the players' hook and the recorder observe their kinds only")
    func session() {
        let session = GraphSession(logger: Self.logger)
        var graph = Graph()
        let client = GraphChange.client(Client(id: 20, props: ["application.process.binary": "wireplumber", "wireplumber.daemon": "true"]))
        graph.apply(client)
        #expect(session.observedKinds.contains(client.kind))
        _ = session.graphDidChange(client, in: Self.turn(graph, session: session))
        #expect(session.mode == .cooperative)
        _ = session.graphDidChange(.removed(20), in: Self.turn(Graph(), session: session))
        #expect(session.mode == .standalone)
        #expect(!PlaybackHook().observedKinds.contains(client.kind))
        #expect(!InputRecorder().observedKinds.contains(GraphChangeKinds.link))
    }
}
