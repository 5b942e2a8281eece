/// Reads a node's `mute` from its `Props` param straight from the pw-dump bytes, as
/// `RouteDecoder` reads routes: pw-dump prints a node's Props as a list of objects (a stream
/// has one, its converter's: `"Props": [ { "volume": 1.0, "mute": false, "channelVolumes":
/// [...], "softMute": false, …, "params": [...] } ]` on 0.3.65 and 1.4.2); the first object
/// that has a `mute` gives it, and nothing else of the list is built.
enum PropsDecoder {
    static let props = "Props"

    /// What a Props list said of `mute`.
    enum Reading: Sendable {
        case mute(Bool)
        /// No object of the list has a mute (or the list is null).
        case absent
        /// The first object with a mute, at this index, gives something else than a boolean.
        case notBool(index: Int)
        /// The value is neither an array nor null.
        case notArray
    }

    /// The Props list, read in the scanner's pass.
    @Sendable static func readMute(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> JSONScanner.Captured {
        guard scanner.peek() == UInt8(ascii: "[") else {
            let isNull = scanner.peek() == UInt8(ascii: "n")
            try scanner.skipValue()
            return .props(isNull ? .absent : .notArray)
        }
        var reading = Reading.absent
        var index = 0
        try scanner.forEachElement { (element: inout JSONScanner) throws(JSONScanner.Failure) in
            defer { index += 1 }
            guard case .absent = reading, element.peek() == UInt8(ascii: "{") else { return try element.skipValue() }
            try element.forEachField { (key: String, value: inout JSONScanner) throws(JSONScanner.Failure) in
                guard key == "mute", case .absent = reading else { return try value.skipValue() }
                switch value.peek() {
                case UInt8(ascii: "t"), UInt8(ascii: "f"):
                    guard case .bool(let mute) = try value.value() else { throw JSONScanner.Failure(offset: value.offset) }
                    reading = .mute(mute)
                default:
                    try value.skipValue()
                    reading = .notBool(index: index)
                }
            }
        }
        return .props(reading)
    }

    /// The mute the node's scan captured; nil (with a warning for a malformed one) when none.
    static func mute(in captured: [String: JSONScanner.Captured], reader: FieldReader, warnings: inout DecodingWarnings) -> Bool? {
        guard case .props(let reading)? = captured[props] else { return nil }
        switch reading {
        case .mute(let mute): return mute
        case .absent: return nil
        case .notBool(let index):
            warnings.add(reader.error("field \"mute\" must be a boolean; field skipped", at: ".\(props)[\(index)].mute"))
        case .notArray:
            warnings.add(reader.error("field \"\(props)\" must be an array; field skipped", at: ".\(props)"))
        }
        return nil
    }
}
