import AudioGraph
import CPipeWire
import CPipeWireShims

/// The choke point for small libpipewire conversions shared by the whole module.
enum LibPipeWire {
    /// `pw_init` must run once per process before any other call; a static let is
    /// initialised exactly once, thread-safely.
    static let initialized: Void = { pw_init(nil, nil) }()

    /// Copies a `spa_dict` into Swift; nil keys or values are skipped.
    static func properties(_ dict: UnsafePointer<spa_dict>?) -> Properties {
        guard let dict, let items = dict.pointee.items else { return [:] }
        let count = Int(dict.pointee.n_items)
        var props = Properties(minimumCapacity: count)
        for index in 0..<count {
            let item = items[index]
            guard let key = item.key, let value = item.value else { continue }
            props[String(cString: key)] = String(cString: value)
        }
        return props
    }

    /// A new `pw_properties` holding `props`, for a call that takes it over (pw_context_connect,
    /// pw_context_create_metadata); freed here if a key cannot be set.
    static func newProperties(_ props: Properties) throws(PipeWireError) -> UnsafeMutablePointer<pw_properties> {
        // pw_properties_new fails only when malloc does.
        guard let properties = CPipeWire_properties_new_empty() else {
            throw PipeWireError.requestFailed(operation: "pw_properties_new", code: -ENOMEM, message: "out of memory")
        }
        for (key, value) in props.sorted(by: { $0.key < $1.key }) {
            do throws(PipeWireError) {
                try check(pw_properties_set(properties, key, value), "pw_properties_set \(key)")
            } catch {
                pw_properties_free(properties)
                throw error
            }
        }
        return properties
    }

    /// Calls `body` with a `spa_dict` holding `props`; the dict lives only during the call.
    static func withDict<Result>(_ props: Properties, _ body: (UnsafePointer<spa_dict>) -> Result) throws(PipeWireError) -> Result {
        let properties = try newProperties(props)
        defer { pw_properties_free(properties) }
        return withUnsafePointer(to: properties.pointee.dict) { body($0) }
    }

    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
