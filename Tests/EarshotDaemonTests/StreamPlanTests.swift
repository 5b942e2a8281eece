import AudioGraph
import EarshotDaemon
import TestScheduling
import Testing

/// Standalone relinking as data: which streams get ports, which move, and in what order.
@Suite("Stream plan", .blockingCalls)
struct StreamPlanTests {
    /// Two sinks (10 speakers, 20 headphones) and streams with stereo output ports.
    static func graph(streams: [(id: ObjectID, props: Properties, ports: Bool)], links: [Link] = []) -> Graph {
        var graph = Graph()
        for (id, name) in [(ObjectID(10), "speakers"), (20, "headphones")] {
            graph.apply(.node(Node(id: id, props: ["node.name": name, "media.class": "Audio/Sink", "object.serial": String(id)])))
            for (offset, channel) in ["FL", "FR"].enumerated() {
                graph.apply(.port(Port(id: id + 1 + ObjectID(offset), direction: .input, props: ["node.id": String(id), "audio.channel": channel])))
            }
        }
        for stream in streams {
            graph.apply(.node(Node(id: stream.id, props: stream.props.merging(["media.class": "Stream/Output/Audio"]) { a, _ in a })))
            if stream.ports {
                for (offset, channel) in ["FL", "FR"].enumerated() {
                    graph.apply(.port(Port(id: stream.id + 1 + ObjectID(offset), direction: .output, props: ["node.id": String(stream.id), "audio.channel": channel])))
                }
            }
        }
        for link in links { graph.apply(.link(link)) }
        return graph
    }

    static func link(_ id: ObjectID, from stream: ObjectID, to sink: ObjectID) -> Link {
        Link(id: id, outputNode: stream, outputPort: stream + 1, inputNode: sink, inputPort: sink + 1)
    }

    @Test("a stream without ports gets them once; then it is linked to the default")
    func newStream() {
        let bare = Self.graph(streams: [(30, [:], false)])
        #expect(StreamPlan.make(graph: bare, defaultSink: "speakers", ownedLinks: [:], portsRequested: []).configurePorts == [30])
        #expect(StreamPlan.make(graph: bare, defaultSink: "speakers", ownedLinks: [:], portsRequested: [30]).isEmpty)
        let ready = Self.graph(streams: [(30, [:], true)])
        let plan = StreamPlan.make(graph: ready, defaultSink: "speakers", ownedLinks: [:], portsRequested: [30])
        #expect(plan.moves == [.init(stream: 30, target: 10, needsLink: true, obsoleteLinks: [])])
    }

    @Test("a following stream moves make-before-break: link the new sink, then drop Earshot's old links")
    func move() {
        let graph = Self.graph(streams: [(30, [:], true)], links: [Self.link(90, from: 30, to: 10), Self.link(91, from: 30, to: 10)])
        let owned: [ObjectID: [ObjectID: ObjectID]] = [30: [90: 10, 91: 10]]
        let plan = StreamPlan.make(graph: graph, defaultSink: "headphones", ownedLinks: owned, portsRequested: [])
        #expect(plan.moves == [.init(stream: 30, target: 20, needsLink: true, obsoleteLinks: [90, 91])])
        // Once the new links exist (even before the registry shows them) only the break is left.
        let linked: [ObjectID: [ObjectID: ObjectID]] = [30: [90: 10, 91: 10, 95: 20, 96: 20]]
        let rest = StreamPlan.make(graph: graph, defaultSink: "headphones", ownedLinks: linked, portsRequested: [])
        #expect(rest.moves == [.init(stream: 30, target: 20, needsLink: false, obsoleteLinks: [90, 91])])
        let settled: [ObjectID: [ObjectID: ObjectID]] = [30: [95: 20, 96: 20]]
        #expect(StreamPlan.make(graph: graph, defaultSink: "headphones", ownedLinks: settled, portsRequested: []).isEmpty)
    }

    @Test("streams linked by someone else, pinned streams already placed, and autoconnect=false are left alone")
    func leftAlone() {
        let graph = Self.graph(
            streams: [(30, [:], true), (40, ["target.object": "speakers"], true), (50, ["node.autoconnect": "false"], true)],
            links: [Self.link(90, from: 30, to: 10)])
        let plan = StreamPlan.make(graph: graph, defaultSink: "headphones", ownedLinks: [40: [80: 10]], portsRequested: [])
        #expect(plan.isEmpty)
    }

    @Test("a pinned stream is linked to its target (by name, serial or id), never to the default")
    func pinned() {
        for target in ["speakers", "10"] {
            let graph = Self.graph(streams: [(40, ["target.object": target], true)])
            let plan = StreamPlan.make(graph: graph, defaultSink: "headphones", ownedLinks: [:], portsRequested: [])
            #expect(plan.moves == [.init(stream: 40, target: 10, needsLink: true, obsoleteLinks: [])])
        }
    }

    @Test("no default sink: nothing to link")
    func noDefault() {
        let graph = Self.graph(streams: [(30, [:], true)])
        #expect(StreamPlan.make(graph: graph, defaultSink: nil, ownedLinks: [:], portsRequested: []).isEmpty)
        #expect(StreamPlan.make(graph: graph, defaultSink: "gone", ownedLinks: [:], portsRequested: []).isEmpty)
    }

    @Test("the session manager is recognised from its client's properties")
    func sessionManager() {
        var graph = Graph()
        #expect(SessionManagerDetector.detect(in: graph) == nil)
        graph.apply(.client(Client(id: 3, props: ["application.name": "mpv"])))
        #expect(SessionManagerDetector.detect(in: graph) == nil)
        graph.apply(.client(Client(id: 4, props: ["wireplumber.daemon": "true", "application.name": "WirePlumber"])))
        #expect(SessionManagerDetector.detect(in: graph) == SessionManager(name: "WirePlumber", version: nil))
        #expect(SessionManagerDetector.detect(in: graph)?.movesPinnedStreams == true, "0.4 publishes no version")
        graph.apply(.client(Client(id: 4, props: ["wireplumber.daemon": "true", "application.version": "0.5.8"])))
        #expect(SessionManagerDetector.detect(in: graph) == SessionManager(name: "WirePlumber", version: "0.5.8"))
        #expect(SessionManagerDetector.detect(in: graph)?.movesPinnedStreams == false)
        #expect(SessionManagerDetector.detect(in: graph)?.description == "WirePlumber 0.5.8")
        graph.apply(.removed(4))
        graph.apply(.client(Client(id: 5, props: ["application.process.binary": "pipewire-media-session"])))
        #expect(SessionManagerDetector.detect(in: graph)?.name == "pipewire-media-session")
        #expect(SessionManagerDetector.detect(in: graph)?.movesPinnedStreams == false)
    }
}
