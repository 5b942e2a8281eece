import Foundation

/// A `pw-dump` file that cannot be read as a graph: says which file, where, and what.
public struct GraphDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var source: String
    /// `line 3, column 7` for syntax errors, `objects[4].info.direction` for bad fields.
    public var location: String
    public var message: String

    public var description: String { "\(source): \(location): \(message)" }
}

/// Decodes `pw-dump` output into a `Graph`. Unknown object types (Core, Module, Factory,
/// Profiler…) and unknown fields are skipped; objects pw-dump prints as removed (`info: null`)
/// are left out; only what routing needs must be well-formed.
public enum PwDumpDecoder {
    public static let nodeType = "PipeWire:Interface:Node"
    public static let portType = "PipeWire:Interface:Port"
    public static let linkType = "PipeWire:Interface:Link"
    public static let deviceType = "PipeWire:Interface:Device"
    public static let clientType = "PipeWire:Interface:Client"
    public static let metadataType = "PipeWire:Interface:Metadata"

    public static func decode(contentsOf url: URL) throws(GraphDecodingError) -> Graph {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw GraphDecodingError(source: url.path, location: "file", message: "cannot read: \(error.localizedDescription)")
        }
        return try decode(data, source: url.path)
    }

    /// One pass over the bytes (JSONScanner): each top-level object is read, applied and
    /// dropped, and its `info.params` skipped unread, so time and memory grow with the file
    /// linearly and the file is never held as a tree (a 90 MB dump of 5205 sinks: scripts/bench graph).
    public static func decode(_ data: Data, source: String = "<graph>") throws(GraphDecodingError) -> Graph {
        let result: Result<Graph, GraphDecodingError> = data.withUnsafeBytes { raw in
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
                // A bad field is reported after the whole text is known to be JSON, as before.
                var fieldError: GraphDecodingError?
                try scanner.forEachElement { (element: inout JSONScanner) throws(JSONScanner.Failure) in
                    let object = try element.value(skipping: ["info": ["params"]])
                    if fieldError == nil {
                        do throws(GraphDecodingError) {
                            if let change = try decodeObject(object, path: "objects[\(index)]", source: source) { graph.apply(change) }
                        } catch {
                            fieldError = error
                        }
                    }
                    index += 1
                }
                scanner.skipWhitespace()
                guard scanner.atEnd else { throw JSONScanner.Failure(offset: scanner.offset) }
                if let fieldError { return .failure(fieldError) }
                return .success(graph)
            } catch {
                return .failure(GraphDecodingError(source: source, location: JSONScanner.location(of: error.offset, in: raw), message: "not valid JSON"))
            }
        }
        return try result.get()
    }

    /// One pw-dump object as a graph change, or nil for types routing does not model.
    public static func decodeObject(_ object: JSONValue, path: String, source: String) throws(GraphDecodingError) -> GraphChange? {
        var fields = FieldReader(source: source, path: path)
        guard case .object = object else { throw fields.error("expected an object") }
        let type = try fields.string(object, "type")
        let id = try fields.id(object, "id")
        if type == metadataType {
            let props = try fields.properties(object["props"], "props")
            var result = Metadata(id: id, props: props)
            if case .array(let items)? = object["metadata"] {
                for (n, item) in items.enumerated() {
                    let entry = FieldReader(source: source, path: "\(path).metadata[\(n)]")
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
                }
            }
            return .metadata(result)
        }
        guard [nodeType, portType, linkType, deviceType, clientType].contains(type) else { return nil }
        guard let info = object["info"], info != .null else { return nil }
        fields.path += ".info"
        let props = try fields.properties(info["props"], "props")
        switch type {
        case nodeType:
            let state = try fields.optionalEnum(info, "state", NodeState.self)
            return .node(Node(id: id, state: state, props: props))
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
                state: try fields.optionalEnum(info, "state", LinkState.self), props: props))
        case deviceType:
            return .device(Device(id: id, props: props))
        default:
            return .client(Client(id: id, props: props))
        }
    }

}

/// Reads typed fields of one pw-dump object and names the field in its errors.
struct FieldReader {
    let source: String
    var path: String

    func error(_ message: String) -> GraphDecodingError {
        GraphDecodingError(source: source, location: path, message: message)
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
