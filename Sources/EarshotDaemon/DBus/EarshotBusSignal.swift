import AudioGraph
import ControlProtocol
import SystemBridge
import WireFields

/// One argument of a D-Bus signal: a field of the event it signals, by key path, so its type
/// and value come from the field's declaration (`wireFields`); D-Bus has no null, so none is
/// `""` (an empty `a{sv}` for an object).
struct EarshotBusArgument<Record: WireRecord>: Sendable {
    let name: String
    let signature: String
    /// Where the value is in the event's JSON: its key, and a nested record's key under it.
    let keys: [String]
    /// The field's doc line (the docs' table of the signal).
    let doc: String
    /// A form other than the field's JSON one (`11:22:33:44:55:66 (config)` for an address).
    let custom: (@Sendable (Record) -> DBusValue)?

    /// The field at `path`, named as its JSON key is (dashes as underscores) unless `name`.
    static func field(_ path: PartialKeyPath<Record> & Sendable, as name: String? = nil) -> Self {
        let field = declaration(path, in: Record.self)
        return Self(name: name ?? field.key.replacingDashes, signature: field.type.dbus, keys: [field.key], doc: field.doc, custom: nil)
    }

    /// A field of a nested record (`port-event`'s `kind`).
    static func field<Nested: WireRecord>(
        _ path: KeyPath<Record, Nested?> & Sendable, _ nested: PartialKeyPath<Nested> & Sendable, as name: String
    ) -> Self {
        let outer = declaration(path, in: Record.self), inner = declaration(nested, in: Nested.self)
        return Self(name: name, signature: inner.type.dbus, keys: [outer.key, inner.key], doc: "`\(outer.key)`'s `\(inner.key)`: \(inner.doc)", custom: nil)
    }

    /// Every field of a record written beside the event's own (`stream-moved`'s move), in its
    /// declared order, each named as its JSON key is.
    static func fields<Nested: WireRecord>(inline path: KeyPath<Record, Nested> & Sendable) -> [Self] {
        guard declaration(path, in: Record.self).absent == .inline else { preconditionFailure("\(path) is not inlined in \(Record.self)") }
        return Nested.docRows.map { row in
            Self(name: row.key.replacingDashes, signature: row.type.dbus, keys: [row.key], doc: row.doc, custom: nil)
        }
    }

    /// The field at `path` in a form of the service's own (`signature`, made by `value`).
    static func field(_ path: PartialKeyPath<Record> & Sendable, signature: String, _ value: @escaping @Sendable (Record) -> DBusValue) -> Self {
        let field = declaration(path, in: Record.self)
        return Self(name: field.key.replacingDashes, signature: signature, keys: [field.key], doc: field.doc, custom: value)
    }

    private static func declaration<R: WireRecord>(_ path: PartialKeyPath<R>, in _: R.Type) -> WireField<R> {
        guard let field = R.wireField(path) else { preconditionFailure("\(path) is not a declared wire field of \(R.self)") }
        return field
    }

    func value(of record: Record, json: JSONValue) -> DBusValue {
        if let custom { return custom(record) }
        var value = json
        for key in keys {
            guard case .object(let fields) = value else { value = .null; break }
            value = fields[key] ?? .null
        }
        return EarshotBusValues.value(value, signature: signature)
    }
}

/// A signal of `org.earshot.Earshot1`, declared once: its name, doc string and arguments make
/// both what the service sends and the `<signal>` element of the introspection XML (a test
/// checks dbus/org.earshot.Earshot1.xml holds exactly that element).
struct EarshotBusSignal<Record: WireRecord>: Sendable {
    let name: String
    /// The version that added it (nil: there from the first).
    var since: String? = nil
    let doc: String
    let arguments: [EarshotBusArgument<Record>]

    func arguments(for record: Record) -> [DBusValue] {
        let json = (try? ControlWire.jsonValue(of: record)) ?? .null
        return arguments.map { $0.value(of: record, json: json) }
    }

    /// The element as the XML has it (four spaces in, as in the interface).
    var xml: String {
        var lines = ["    <signal name=\"\(name)\">", "      <annotation name=\"org.gtk.GDBus.DocString\" value=\"\(doc)\"/>"]
        lines += arguments.map { "      <arg name=\"\($0.name)\" type=\"\($0.signature)\"/>" }
        lines.append("    </signal>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Its row of docs/dbus.md's table of signals: `| `RoutePortChanged` (0.3) | `s reason, …` |`.
    var summaryRow: String {
        let arguments = arguments.map { "\($0.signature) \($0.name)" }.joined(separator: ", ")
        return "| `\(name)`\(since.map { " (\($0))" } ?? "") | `\(arguments)` |"
    }
}

extension String {
    fileprivate var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }
}
