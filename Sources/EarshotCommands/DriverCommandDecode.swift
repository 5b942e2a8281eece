import WireFields
import ControlProtocol
import AccessoryDrivers
import FoundationEssentials
import RoutingPolicy
import SystemBridge

/// The logic of `earshot driver decode`: lines in (streamed, each bounded), JSON Lines out.
enum DriverDecodeActions {
    /// The input cannot be read: the exit code of the other commands' "cannot read".
    static let inputError: Int32 = EvalActions.inputError
    /// The longest line read; a longer one is reported malformed and skipped to its end.
    static let maximumLineBytes = 64 << 10

    static func run(path: String, family: AccessoryFamily?, write: (String) -> Void) -> CommandOutcome {
        let file: ReadingFile
        do {
            file = try FileSystem.openForReading(path)
        } catch {
            return failure(path: path, error)
        }
        defer { file.close() }
        var decoder = PacketLineDecoder(family: family)
        var splitter = LineSplitter(maximum: maximumLineBytes)
        func emit(_ records: [PacketLineDecoder.Record]) {
            for record in records { write(record.jsonLine) }
        }
        while true {
            let chunk: [UInt8]
            do {
                chunk = try file.read()
            } catch {
                return failure(path: path, error)
            }
            if chunk.isEmpty { break }
            for line in splitter.take(chunk) { emit(decoder.decode(line)) }
        }
        if let last = splitter.finish() { emit(decoder.decode(last)) }
        emit(decoder.finish())
        return CommandOutcome()
    }

    private static func failure(path: String, _ error: SystemError) -> CommandOutcome {
        CommandOutcome(standardError: "earshot driver decode: cannot read \(InputFile.name(path)): \(error.reason)\n", exitCode: inputError)
    }
}

/// Cuts a byte stream into lines of at most `maximum` bytes without holding more than that:
/// the rest of a longer line is skipped and the line is reported as `.tooLong`.
struct LineSplitter {
    enum Line: Equatable {
        case text([UInt8], number: Int)
        case tooLong(number: Int)
    }

    let maximum: Int
    private var current: [UInt8] = []
    private var skipping = false
    private var number = 0

    init(maximum: Int) {
        self.maximum = maximum
    }

    mutating func take(_ chunk: [UInt8]) -> [Line] {
        var lines: [Line] = []
        var start = chunk.startIndex
        while start < chunk.endIndex {
            let newline = chunk[start...].firstIndex(of: 0x0A)
            let end = newline ?? chunk.endIndex
            if !skipping {
                if current.count + (end - start) > maximum {
                    number += 1
                    lines.append(.tooLong(number: number))
                    current.removeAll()
                    skipping = true
                } else {
                    current += chunk[start..<end]
                }
            }
            guard let newline else { break }
            if skipping {
                skipping = false
            } else {
                number += 1
                lines.append(.text(current, number: number))
                current.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        return lines
    }

    /// The last line when the input did not end with a newline.
    mutating func finish() -> Line? {
        defer { current.removeAll() }
        guard !skipping, !current.isEmpty else { return nil }
        number += 1
        return .text(current, number: number)
    }
}

/// Decodes lines as `earshot driver decode` prints them: one `Record` per AAP packet, per
/// Galaxy Buds message or Sony frame, per sent or malformed line. Galaxy Buds and Sony lines feed
/// one decoder per accessory (address and model or form), so frames may span lines of one device
/// in a mixed log, and a Sony handshake reply sets the protocol version for that device's later
/// frames. Sony records number frames: a line that ends none takes no number.
struct PacketLineDecoder {
    /// `--family`: overrides the family a line's prefix names.
    let family: AccessoryFamily?
    private var packets = 0
    private var galaxy: [String: GalaxyBudsDecoder] = [:]
    private var sony: [String: SonyStream] = [:]
    /// Keys of `sony` in the order their devices first came, for `finish()`.
    private var sonyKeys: [String] = []

    private struct SonyStream {
        var decoder: SonyDecoder
        var accessory: String?
    }

    init(family: AccessoryFamily?) {
        self.family = family
    }

    mutating func decode(_ line: LineSplitter.Line) -> [Record] {
        switch line {
        case .tooLong(let number):
            packets += 1
            return [.malformed(packets, "line \(number): longer than \(DriverDecodeActions.maximumLineBytes) bytes; skipped")]
        case .text(let bytes, let number):
            return decode(String(decoding: bytes, as: UTF8.self), line: number)
        }
    }

    mutating func decode(_ text: String, line: Int) -> [Record] {
        var text = Substring(text)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        let trimmed = String(text.trimmingWhitespace)
        guard !trimmed.isEmpty else { return [] }
        packets += 1
        let parsed: PacketLogLine
        switch PacketLogLine.parse(trimmed) {
        case .success(let line): parsed = line
        case .failure(let error): return [.malformed(packets, "line \(line): \(error)")]
        }
        var base = Record(packet: packets, kind: "")
        base.accessory = parsed.device?.address.description
        if parsed.direction == .sent {
            base.kind = "sent"
            return [base]
        }
        guard let family = family ?? parsed.device?.family else {
            return [.malformed(packets, "line \(line): no family: pass --family or prefix the line with an address and family")]
        }
        switch family {
        case .aap:
            return [Record(AAPPacket.decode(parsed.bytes), base: base, style: .aap)]
        case .galaxyBuds(let model):
            let key = "\(parsed.device?.address.description ?? "-") \(model.rawValue)"
            var decoder = galaxy[key] ?? GalaxyBudsDecoder(model: model)
            let decoded = decoder.receiveFrames(bytes: parsed.bytes)
            galaxy[key] = decoder
            return decoded.map { packet, flags in
                var record = Record(packet, base: base, style: .galaxyBuds)
                if flags != 0 {
                    let digits = String(flags, radix: 16, uppercase: true)
                    record.headerFlags = "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
                }
                return record
            }
        case .sony(let form, _):
            let key = "\(parsed.device?.address.description ?? "-") \(form.rawValue)"
            if sony[key] == nil { sonyKeys.append(key) }
            var stream = sony[key] ?? SonyStream(decoder: SonyDecoder(form: form), accessory: base.accessory)
            let decoded = stream.decoder.receive(bytes: parsed.bytes)
            sony[key] = stream
            // Numbers count frames, not lines: this line's number is taken only by a frame it ends.
            packets -= 1
            return decoded.map { sonyRecord($0, base: base, form: form) }
        }
    }

    /// The input ended: each Sony device's frame begun and not ended, as `malformed`.
    mutating func finish() -> [Record] {
        sonyKeys.compactMap { key in
            guard var stream = sony[key], let packet = stream.decoder.finish() else { return nil }
            sony[key] = stream
            var base = Record(packet: 0, kind: "")
            base.accessory = stream.accessory
            return sonyRecord(packet, base: base, form: stream.decoder.form)
        }
    }

    private mutating func sonyRecord(_ packet: DecodedPacket, base: Record, form: SonyForm) -> Record {
        packets += 1
        var numbered = base
        numbered.packet = packets
        return Record(packet, base: numbered, style: .sony(form))
    }

    /// One line of output. Absent fields are left out; keys are sorted.
    struct Record: Encodable, Equatable {
        var packet: Int
        var kind: String
        var accessory: String?
        var primary: String?
        var secondary: String?
        var left: String?
        var right: String?
        var placement: String?
        var components: [Component]?
        var opcode: String?
        var source: String?
        var activity: String?
        var why: String?
        /// Sony: an ACK's sequence number, the handshake's protocol version, a support list's
        /// table and function ids.
        var seq: Int?
        var version: Int?
        var table: Int?
        var functions: [String]?
        /// Galaxy Buds: header bits no note names, kept (`0x0C00`).
        var headerFlags: String?

        enum CodingKeys: String, CodingKey {
            case packet, kind, accessory, primary, secondary, left, right, placement, components, opcode, source, activity, why
            case seq, version, table, functions
            case headerFlags = "header-flags"
        }

        struct Component: Encodable, Equatable {
            var component: String
            var level: Int?
            var status: String
        }

        init(packet: Int, kind: String) {
            self.packet = packet
            self.kind = kind
        }

        static func malformed(_ packet: Int, _ why: String) -> Record {
            var record = Record(packet: packet, kind: "malformed")
            record.why = why
            return record
        }

        /// Whose packet a record describes: names, hex widths and which fields apply differ.
        enum Style: Equatable {
            case aap
            case galaxyBuds
            case sony(SonyForm)
        }

        init(_ decoded: DecodedPacket, base: Record, style: Style) {
            self = base
            let galaxy = style == .galaxyBuds
            switch decoded {
            case .earDetection(let buds, let components):
                kind = "ear-detection"
                if galaxy {
                    (left, right) = (Self.name(buds.first), Self.name(buds.second))
                } else {
                    (primary, secondary) = (Self.name(buds.first), Self.name(buds.second))
                }
                placement = buds.placement(rule: .either)?.rawValue
                if galaxy { self.components = components.map(Component.init) }
            case .battery(let components):
                kind = "battery"
                self.components = components.map(Component.init)
            case .audioSource(let audioSource):
                kind = "audio-source"
                source = audioSource.address.description
                activity = audioSource.activity.map { "\($0)" }
            case .wear(let worn, let sides):
                kind = "wear"
                placement = worn?.rawValue
                if let sides, case .sony(let form) = style {
                    (left, right) = (Self.name(sides.first, form: form), Self.name(sides.second, form: form))
                }
            case .ack(let number):
                kind = "ack"
                seq = Int(number)
            case .protocolInfo(let number):
                kind = "protocol-info"
                version = number
            case .supportFunctions(let number, let ids):
                kind = "support-functions"
                table = number
                functions = ids.map { Self.hex(UInt16($0), width: 2) }
            case .ignored(let code):
                kind = "ignored"
                opcode = code.map { Self.hex($0, width: style == .aap ? 4 : 2) }
            case .unknown(let code):
                kind = "unknown"
                opcode = Self.hex(code, width: style == .aap ? 4 : 2)
            case .malformed(let reason):
                kind = "malformed"
                why = reason
            }
        }

        var jsonLine: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // Every field is a string, number or array of them: encoding cannot fail.
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }

        private static func name(_ state: BudState) -> String {
            switch state {
            case .inEar: "in-ear"
            case .outOfEar: "out-of-ear"
            case .inCase: "in-case"
            case .disconnected: "disconnected"
            case .unrecognized: "unrecognized"
            }
        }

        /// Headphone cups are worn or not; buds are in the ear or out.
        private static func name(_ state: BudState, form: SonyForm) -> String {
            switch (form, state) {
            case (.headphones, .inEar): "worn"
            case (.headphones, .outOfEar): "not-worn"
            default: name(state)
            }
        }

        /// `0x0006` for AAP opcodes (16 bits), `0x61` for Galaxy Buds message ids and Sony opcodes.
        private static func hex(_ value: UInt16, width: Int) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
    }
}

extension PacketLineDecoder.Record.Component {
    init(_ component: BatteryComponent) {
        self.init(component: component.kind.rawValue, level: component.level, status: component.status.rawValue)
    }
}
