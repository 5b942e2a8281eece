import CSystemdBus
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads and writes whole message bodies as `DBusValue`s: the one place that walks sd-bus's
/// message cursor (peek / enter / read / exit, open / append / close).
enum SDBusMessageCodec {
    /// Every value from the cursor to the end of the body (or of the container entered).
    static func readAll(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let more = try check(sd_bus_message_peek_type(message, &type, &contents), "reading a message")
            if more == 0 { return values }
            values.append(try readOne(message, type: type, contents: contents.map { String(cString: $0) } ?? ""))
        }
    }

    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        for value in values { try appendOne(value, to: message) }
    }

    private static func readOne(_ message: OpaquePointer, type: CChar, contents: String) throws(DBusError) -> DBusValue {
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "a"):
            let items = try inside(message, type, contents) { () throws(DBusError) in try readAll(message) }
            return .array(element: contents, items)
        case UInt8(ascii: "e"):
            let pair = try inside(message, type, contents) { () throws(DBusError) in try readAll(message) }
            guard pair.count == 2 else { throw .failed(operation: "reading a dictionary entry", errno: EBADMSG) }
            return .dictEntry(pair[0], pair[1])
        case UInt8(ascii: "r"):
            return .structure(try inside(message, type, contents) { () throws(DBusError) in try readAll(message) })
        case UInt8(ascii: "v"):
            let inner = try inside(message, type, contents) { () throws(DBusError) in try readAll(message) }
            guard let value = inner.first else { throw .failed(operation: "reading a variant", errno: EBADMSG) }
            return .variant(value)
        default:
            return try readBasic(message, type: type)
        }
    }

    private static func readBasic(_ message: OpaquePointer, type: CChar) throws(DBusError) -> DBusValue {
        func read<T: BitwiseCopyable>(_ initial: T) throws(DBusError) -> T {
            var value = initial
            try check(sd_bus_message_read_basic(message, type, &value), "reading a value")
            return value
        }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try read(UInt8(0)))
        case UInt8(ascii: "b"): return .boolean(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try read(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try read(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try read(Int32(0)))
        case UInt8(ascii: "h"):
            // The message owns (and will close) the descriptor it returns: keep a duplicate.
            let borrowed = try read(Int32(-1))
            do throws(SystemError) { return .fileDescriptor(try DBusFileDescriptor(duplicating: borrowed)) } catch {
                throw .failed(operation: "duplicating a received file descriptor", errno: error.code)
            }
        case UInt8(ascii: "u"): return .uint32(try read(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let pointer = try read(UnsafePointer<CChar>?.none)
            let text = pointer.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "s"): return .string(text)
            case UInt8(ascii: "o"): return .objectPath(text)
            default: return .signature(text)
            }
        default:
            throw .failed(operation: "reading a value of type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))'", errno: EBADMSG)
        }
    }

    private static func appendOne(_ value: DBusValue, to message: OpaquePointer) throws(DBusError) {
        func basic<T: BitwiseCopyable>(_ type: Character, _ raw: T) throws(DBusError) {
            var raw = raw
            try check(sd_bus_message_append_basic(message, ascii(type), &raw), "writing a value")
        }
        func text(_ type: Character, _ string: String) throws(DBusError) {
            try check(string.withCString { sd_bus_message_append_basic(message, ascii(type), $0) }, "writing a string")
        }
        func container(_ type: Character, _ contents: String, _ items: [DBusValue]) throws(DBusError) {
            try check(sd_bus_message_open_container(message, ascii(type), contents), "opening a container")
            try append(items, to: message)
            try check(sd_bus_message_close_container(message), "closing a container")
        }
        switch value {
        case .byte(let raw): try basic("y", raw)
        case .boolean(let raw): try basic("b", Int32(raw ? 1 : 0))
        case .int16(let raw): try basic("n", raw)
        case .uint16(let raw): try basic("q", raw)
        case .int32(let raw): try basic("i", raw)
        case .uint32(let raw): try basic("u", raw)
        case .int64(let raw): try basic("x", raw)
        case .uint64(let raw): try basic("t", raw)
        case .double(let raw): try basic("d", raw)
        case .string(let raw): try text("s", raw)
        case .objectPath(let raw): try text("o", raw)
        case .signature(let raw): try text("g", raw)
        case .array(let element, let items): try container("a", element, items)
        case .dictEntry(let key, let item): try container("e", key.signature + item.signature, [key, item])
        case .structure(let fields): try container("r", fields.map(\.signature).joined(), fields)
        case .variant(let inner): try container("v", inner.signature, [inner])
        case .fileDescriptor(let descriptor):
            // sd-bus appends a duplicate, so the value keeps its own.
            try descriptor.withDescriptor { (owned: FileDescriptor?) throws(DBusError) in
                guard let owned else { throw .failed(operation: "writing a file descriptor that was taken", errno: EBADF) }
                try basic("h", owned.rawValue)
            }
        }
    }

    /// Runs `body` with the cursor inside the container that starts at the cursor.
    private static func inside<T>(
        _ message: OpaquePointer, _ type: CChar, _ contents: String, _ body: () throws(DBusError) -> T
    ) throws(DBusError) -> T {
        try check(sd_bus_message_enter_container(message, type, contents), "entering a container")
        let result = try body()
        try check(sd_bus_message_exit_container(message), "leaving a container")
        return result
    }

    private static func ascii(_ type: Character) -> CChar { CChar(bitPattern: type.asciiValue!) }

    /// sd-bus returns a negative errno on failure.
    @discardableResult
    static func check(_ result: Int32, _ operation: String) throws(DBusError) -> Int32 {
        guard result >= 0 else { throw .failed(operation: operation, errno: -result) }
        return result
    }
}
