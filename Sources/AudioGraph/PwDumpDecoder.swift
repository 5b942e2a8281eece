import FoundationEssentials

/// A `pw-dump` file that cannot be read as a graph: says which file, where, and what.
public struct GraphDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var source: String
    /// `line 3, column 7` for syntax errors, `objects[4].info.direction` for bad fields.
    public var location: String
    public var message: String

    public var description: String { "\(source): \(location): \(message)" }
}

/// A `pw-dump` decoded: the graph, and what was left out of it on the way.
public struct DecodedGraph: Sendable {
    public var graph: Graph
    /// The first `GraphDecodingWarnings.kept` objects or fields skipped, each with its
    /// `objects[i]` path and why.
    public var warnings: [GraphDecodingError]
    /// How many were skipped in all (more than `warnings.count` when there were many).
    public var skipped: Int
}

/// Decodes `pw-dump` output into a `Graph`. It degrades, never refuses: object types routing
/// does not model (Core, Module, Factory, Profiler…) are passed over, objects pw-dump prints as
/// removed (`info: null`) are left out, and an object or field of a modelled type that cannot
/// be read (a Link without port ids, a Node state of a newer PipeWire, a route without a name)
/// is skipped with a warning naming its `objects[i]` path. `strict` makes the first such
/// warning the error. Text that is not JSON is always an error, with line and column.
public enum PwDumpDecoder {
    public static let nodeType = "PipeWire:Interface:Node"
    public static let portType = "PipeWire:Interface:Port"
    public static let linkType = "PipeWire:Interface:Link"
    public static let deviceType = "PipeWire:Interface:Device"
    public static let clientType = "PipeWire:Interface:Client"
    public static let metadataType = "PipeWire:Interface:Metadata"

    /// At most this many warnings are kept; the rest are counted.
    public static let keptWarnings = 100

    public static func decode(contentsOf url: URL) throws(GraphDecodingError) -> Graph {
        try decodeReporting(contentsOf: url).graph
    }

    public static func decodeReporting(contentsOf url: URL, strict: Bool = false) throws(GraphDecodingError) -> DecodedGraph {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw GraphDecodingError(source: url.path, location: "file", message: "cannot read: \(ErrorText.describe(error))")
        }
        return try decodeReporting(data, source: url.path, strict: strict)
    }

    /// The graph alone; anything skipped is dropped silently. (Tests and callers that only
    /// need the graph.)
    public static func decode(_ data: Data, source: String = "<graph>") throws(GraphDecodingError) -> Graph {
        try decodeReporting(data, source: source, strict: false).graph
    }

    /// What routing reads of each object: everything but `info.params`, and of the params only
    /// a device's routes and profile and a node's `Props` mute. Formats, prop infos and profile
    /// lists (most of a dump's bytes) are stepped over unbuilt.
    static let pick: JSONScanner.Pick = .fields(
        ["info": .fields(["params": .fields([
            RouteDecoder.enumRoute: .read(RouteDecoder.enumRoute, RouteDecoder.readList),
            RouteDecoder.route: .read(RouteDecoder.route, RouteDecoder.readList),
            RouteDecoder.profile: .read(RouteDecoder.profile, RouteDecoder.readProfile),
            PropsDecoder.props: .read(PropsDecoder.props, PropsDecoder.readMute),
        ], others: false)], others: true)],
        others: true)

    /// One pass over the bytes (JSONScanner): each top-level object is read, applied and
    /// dropped, so time and memory grow with the file linearly and the file is never held as a
    /// tree (a 90 MB dump of 5205 sinks: scripts/bench graph).
    public static func decodeReporting(_ data: Data, source: String = "<graph>", strict: Bool = false) throws(GraphDecodingError) -> DecodedGraph {
        let result: Result<DecodedGraph, GraphDecodingError> = data.withUnsafeBytes { raw in
            var scanner = JSONScanner(raw)
            do throws(JSONScanner.Failure) {
                guard scanner.peek() == UInt8(ascii: "[") else {
                    // Not an array: JSON of another shape, or not JSON at all.
                    _ = try scanner.value()
                    scanner.skipWhitespace()
                    guard scanner.atEnd else { throw JSONScanner.Failure(offset: scanner.offset) }
                    return .failure(GraphDecodingError(source: source, location: "top level", message: "expected the JSON array pw-dump prints"))
                }
                var graph = Graph()
                var index = 0
                var warnings = DecodingWarnings(source: source)
                try scanner.forEachElement { (element: inout JSONScanner) throws(JSONScanner.Failure) in
                    element.captured = [:]
                    let object = try element.value(pick)
                    if let change = decodeObject(object, params: element, path: "objects[\(index)]", warnings: &warnings) { graph.apply(change) }
                    index += 1
                }
                scanner.skipWhitespace()
                guard scanner.atEnd else { throw JSONScanner.Failure(offset: scanner.offset) }
                // A bad field is reported after the whole text is known to be JSON.
                if strict, let first = warnings.first { return .failure(first) }
                return .success(DecodedGraph(graph: graph, warnings: warnings.kept, skipped: warnings.count))
            } catch {
                return .failure(GraphDecodingError(source: source, location: JSONScanner.location(of: error.offset, in: raw), message: "not valid JSON"))
            }
        }
        return try result.get()
    }

    /// One pw-dump object as a graph change, or nil for types routing does not model; strict:
    /// anything skipped is the error (an eval script's `add` line must say exactly what it means).
    public static func decodeObject(_ object: JSONValue, path: String, source: String) throws(GraphDecodingError) -> GraphChange? {
        var warnings = DecodingWarnings(source: source)
        // Through the bytes, as a file's objects go: one reader of routes.
        let text = Array(object.canonicalText.utf8)
        let change = text.withUnsafeBytes { raw -> GraphChange? in
            var scanner = JSONScanner(raw)
            guard let picked = try? scanner.value(pick) else { return nil }
            return decodeObject(picked, params: scanner, path: path, warnings: &warnings)
        }
        if let first = warnings.first { throw first }
        return change
    }

    /// One pw-dump object as a graph change; nil for types routing does not model and for an
    /// object that cannot be read (a warning says why). A field that cannot be read is left
    /// out of the object, with a warning.
    /// `params`: the scanner that read `object`, holding its captured route params.
    static func decodeObject(_ object: JSONValue, params: JSONScanner, path: String, warnings: inout DecodingWarnings) -> GraphChange? {
        var fields = FieldReader(source: warnings.source, path: path)
        do throws(GraphDecodingError) {
            guard case .object = object else { throw fields.error("expected an object") }
            let type = try fields.string(object, "type")
            let id = try fields.id(object, "id")
            if type == metadataType { return .metadata(try metadata(object, id: id, path: path, warnings: &warnings)) }
            guard [nodeType, portType, linkType, deviceType, clientType].contains(type) else { return nil }
            guard let info = object["info"], info != .null else { return nil }
            fields.path += ".info"
            let props = fields.lenient(&warnings, [:]) { reader throws(GraphDecodingError) in try reader.properties(info["props"], "props") }
            switch type {
            case nodeType:
                let state = fields.lenient(&warnings, nil) { reader throws(GraphDecodingError) in try reader.optionalEnum(info, "state", NodeState.self) }
                let inputPorts = fields.lenient(&warnings, nil) { reader throws(GraphDecodingError) in try reader.optionalCount(info, "n-input-ports") }
                let outputPorts = fields.lenient(&warnings, nil) { reader throws(GraphDecodingError) in try reader.optionalCount(info, "n-output-ports") }
                var node = Node(id: id, state: state, props: props, inputPorts: inputPorts, outputPorts: outputPorts)
                // Only a playback stream's, as a live connection follows only theirs (`Node.mute`).
                if node.isPlaybackStream {
                    var paramsReader = fields
                    paramsReader.path += ".params"
                    node.mute = PropsDecoder.mute(in: params.captured, reader: paramsReader, warnings: &warnings)
                }
                return .node(node)
            case portType:
                guard let direction = try fields.optionalEnum(info, "direction", PortDirection.self) else {
                    throw fields.error("missing field \"direction\"")
                }
                return .port(Port(id: id, direction: direction, props: props))
            case linkType:
                return .link(Link(
                    id: id,
                    outputNode: try fields.id(info, "output-node-id"), outputPort: try fields.id(info, "output-port-id"),
                    inputNode: try fields.id(info, "input-node-id"), inputPort: try fields.id(info, "input-port-id"),
                    state: fields.lenient(&warnings, nil) { reader throws(GraphDecodingError) in try reader.optionalEnum(info, "state", LinkState.self) },
                    props: props))
            case deviceType:
                var paramsReader = fields
                paramsReader.path += ".params"
                let routes = RouteDecoder.routes(in: params.captured, reader: paramsReader, warnings: &warnings)
                return .device(Device(id: id, props: props, routes: routes))
            default:
                return .client(Client(id: id, props: props))
            }
        } catch {
            warnings.add(GraphDecodingError(source: error.source, location: error.location, message: error.message + "; object skipped"))
            return nil
        }
    }

    private static func metadata(_ object: JSONValue, id: ObjectID, path: String, warnings: inout DecodingWarnings) throws(GraphDecodingError) -> Metadata {
        let fields = FieldReader(source: warnings.source, path: path)
        let props = try fields.properties(object["props"], "props")
        var result = Metadata(id: id, props: props)
        guard case .array(let items)? = object["metadata"] else { return result }
        for (n, item) in items.enumerated() {
            let entry = FieldReader(source: warnings.source, path: "\(path).metadata[\(n)]")
            do throws(GraphDecodingError) {
                let subject = try entry.id(item, "subject")
                let key = try entry.string(item, "key")
                let entryType = item["type"].flatMap { if case .string(let text) = $0 { text } else { nil } }
                let value: String
                switch item["value"] {
                case .string(let text)?: value = text
                case let other?: value = other.canonicalText
                case nil: throw entry.error("missing field \"value\"")
                }
                result.set(subject: subject, key: key, type: entryType, value: value)
            } catch {
                warnings.add(GraphDecodingError(source: error.source, location: error.location, message: error.message + "; entry skipped"))
            }
        }
        return result
    }
}

/// The warnings of one decode: the first `PwDumpDecoder.keptWarnings` kept, all counted.
struct DecodingWarnings {
    let source: String
    private(set) var kept: [GraphDecodingError] = []
    private(set) var count = 0

    init(source: String) { self.source = source }

    var first: GraphDecodingError? { kept.first }

    mutating func add(_ warning: GraphDecodingError) {
        count += 1
        if kept.count < PwDumpDecoder.keptWarnings { kept.append(warning) }
    }
}

/// Reads typed fields of one pw-dump object and names the field in its errors.
struct FieldReader {
    let source: String
    var path: String

    func error(_ message: String, at suffix: String = "") -> GraphDecodingError {
        GraphDecodingError(source: source, location: path + suffix, message: message)
    }

    func string(_ object: JSONValue, _ key: String) throws(GraphDecodingError) -> String {
        guard case .string(let text)? = object[key] else {
            throw error(object[key] == nil ? "missing field \"\(key)\"" : "field \"\(key)\" must be a string")
        }
        return text
    }

    func id(_ object: JSONValue, _ key: String) throws(GraphDecodingError) -> ObjectID {
        guard case .integer(let value)? = object[key], let id = ObjectID(exactly: value) else {
            throw error(object[key] == nil ? "missing field \"\(key)\"" : "field \"\(key)\" must be an object id (0…4294967295)")
        }
        return id
    }

    func optionalEnum<E: RawRepresentable>(_ object: JSONValue, _ key: String, _: E.Type) throws(GraphDecodingError) -> E?
    where E.RawValue == String {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let value = E(rawValue: text) else { throw error("field \"\(key)\" has unknown value \"\(text)\"") }
            return value
        default: throw error("field \"\(key)\" must be a string")
        }
    }

    /// A non-negative count (`n-input-ports`); nil when absent.
    func optionalCount(_ object: JSONValue, _ key: String) throws(GraphDecodingError) -> Int? {
        switch object[key] {
        case nil, .null?: return nil
        case .integer(let value)? where value >= 0 && value <= Int64(Int32.max): return Int(value)
        default: throw error("field \"\(key)\" must be a count (0…2147483647)")
        }
    }

    /// The field's value, or `fallback` with a warning when it cannot be read: a field routing
    /// could do without never costs the whole object.
    func lenient<Value>(_ warnings: inout DecodingWarnings, _ fallback: Value, _ read: (FieldReader) throws(GraphDecodingError) -> Value) -> Value {
        do throws(GraphDecodingError) {
            return try read(self)
        } catch {
            warnings.add(GraphDecodingError(source: error.source, location: error.location, message: error.message + "; field skipped"))
            return fallback
        }
    }

    func properties(_ value: JSONValue?, _ key: String) throws(GraphDecodingError) -> Properties {
        switch value {
        case nil, .null?: return [:]
        case .object(let fields)?:
            var props = Properties(minimumCapacity: fields.count)
            for (name, value) in fields {
                if let text = value.propertyText { props[name] = text }
            }
            return props
        default: throw error("field \"\(key)\" must be an object")
        }
    }
}
