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

    /// Calls `body` with a `spa_dict` holding `props`; the dict lives only during the call.
    static func withDict<Result>(_ props: Properties, _ body: (UnsafePointer<spa_dict>) -> Result) -> Result {
        let properties = CPipeWire_properties_new_empty()!
        defer { pw_properties_free(properties) }
        for (key, value) in props.sorted(by: { $0.key < $1.key }) {
            pw_properties_set(properties, key, value)
        }
        return withUnsafePointer(to: properties.pointee.dict) { body($0) }
    }

    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
