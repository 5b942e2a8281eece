import RoutingPolicy

/// One line of a driver packet log (docs/drivers.md, "Packet logs"):
///
///     AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.123Z < 04 00 04 00 06 00 00 01
///
/// the accessory's address and family (`AccessoryFamily.logName`), the time in UTC with
/// milliseconds, `<` for bytes received from the device or `>` for bytes sent to it, and the
/// bytes as uppercase hex pairs separated by spaces. `parse` also reads the tail alone (a
/// line without the device, without the time, or bare hex with or without spaces), so a hand
/// written capture decodes too.
public struct PacketLogLine: Sendable, Hashable {
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// Bytes the device sent (read from the channel).
        case received = "<"
        /// Bytes Earshot sent to the device.
        case sent = ">"
    }

    /// The accessory the bytes were exchanged with.
    public struct Device: Sendable, Hashable {
        public var address: BluetoothAddress
        public var family: AccessoryFamily

        public init(address: BluetoothAddress, family: AccessoryFamily) {
            self.address = address
            self.family = family
        }
    }

    public var device: Device?
    /// Milliseconds since the Unix epoch.
    public var time: Int64?
    public var direction: Direction?
    public var bytes: [UInt8]

    public init(device: Device? = nil, time: Int64? = nil, direction: Direction? = nil, bytes: [UInt8]) {
        self.device = device
        self.time = time
        self.direction = direction
        self.bytes = bytes
    }

    /// The line without its newline; the fields that are nil are left out.
    public var rendered: String {
        var fields: [String] = []
        if let device { fields += [device.address.description, device.family.logName] }
        if let time { fields.append(Self.timestamp(time)) }
        if let direction { fields.append(direction.rawValue) }
        var text = fields.joined(separator: " ")
        if !bytes.isEmpty {
            if !text.isEmpty { text += " " }
            text += Self.hexPairs(bytes)
        }
        return text
    }

    /// Reads a line rendered above, or any tail of one: `[ADDRESS FAMILY] [TIME] [<|>] HEX`.
    /// The hex may be split by spaces anywhere between digit pairs (or not at all).
    public static func parse(_ line: some StringProtocol) -> Result<PacketLogLine, ParseError> {
        var tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })[...]
        var parsed = PacketLogLine(bytes: [])
        // An address has colons; a time has them too, but also a "T".
        if let first = tokens.first, first.contains(":" as Character), !first.contains("T" as Character) {
            guard let address = BluetoothAddress(first) else { return .failure(ParseError("\"\(first)\" is not a Bluetooth address")) }
            tokens.removeFirst()
            guard let name = tokens.first, let family = AccessoryFamily(logName: name) else {
                return .failure(ParseError("the address must be followed by a family: \(AccessoryFamily.logNames.joined(separator: ", "))"))
            }
            tokens.removeFirst()
            parsed.device = Device(address: address, family: family)
        }
        if let first = tokens.first, first.contains("T" as Character) || first.contains("-" as Character) {
            guard let time = milliseconds(fromTimestamp: first) else {
                return .failure(ParseError("\"\(first)\" is not a time like 2026-11-22T23:04:05.123Z"))
            }
            tokens.removeFirst()
            parsed.time = time
        }
        if let first = tokens.first, let direction = Direction(rawValue: String(first)) {
            tokens.removeFirst()
            parsed.direction = direction
        }
        var digits: [UInt8] = []
        for token in tokens {
            for unit in token.utf8 {
                guard let value = hexValue(unit) else {
                    return .failure(ParseError("\"\(token.prefix(40))\" is not hex"))
                }
                digits.append(value)
            }
        }
        guard digits.count % 2 == 0 else { return .failure(ParseError("odd number of hex digits (\(digits.count))")) }
        parsed.bytes = stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
        return .success(parsed)
    }

    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// `04 00 0F`: uppercase pairs, one space between.
    public static func hexPairs(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            if !text.isEmpty { text.append(UInt8(ascii: " ")) }
            text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: - Time (proleptic Gregorian calendar, UTC; no Foundation in this module)

    /// `2026-11-22T23:04:05.123Z`.
    public static func timestamp(_ milliseconds: Int64) -> String {
        let (days, dayMilliseconds) = milliseconds.floorDivided(by: 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let seconds = dayMilliseconds / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(dayMilliseconds % 1000, 3))Z"
    }

    /// The inverse of `timestamp`; the fraction may have 0 to 9 digits (beyond milliseconds it
    /// is cut), the zone must be `Z`.
    public static func milliseconds(fromTimestamp text: some StringProtocol) -> Int64? {
        let units = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= units.count else { return nil }
            var value: Int64 = 0
            for unit in units[range] {
                guard unit >= UInt8(ascii: "0"), unit <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(unit - UInt8(ascii: "0"))
            }
            return value
        }
        guard units.count >= 20, units.last == UInt8(ascii: "Z"), units[4] == UInt8(ascii: "-"), units[7] == UInt8(ascii: "-"),
              units[10] == UInt8(ascii: "T"), units[13] == UInt8(ascii: ":"), units[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction: Int64 = 0
        if units.count > 20 {
            let digits = units.count - 21
            guard units[19] == UInt8(ascii: "."), (1...9).contains(digits), let value = number(20..<(units.count - 1)) else { return nil }
            fraction = value
            var scale = digits
            while scale < 3 { fraction *= 10; scale += 1 }
            while scale > 3 { fraction /= 10; scale -= 1 }
        } else if units.count != 20 {
            return nil
        }
        let days = self.days(fromCivil: year, month, day)
        return days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + fraction
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 to (year, month, day) (H. Hinnant's civil_from_days).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// (year, month, day) to days since 1970-01-01 (days_from_civil).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func hexValue(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let remainder = self % divisor
        return remainder < 0 ? (self / divisor - 1, remainder + divisor) : (self / divisor, remainder)
    }
}

extension AccessoryFamily {
    /// The family's name in packet logs and on `earshot driver decode --family`: `aap`, or the
    /// Galaxy Buds model (`galaxy-buds`, `galaxy-buds-plus-live-pro`, `galaxy-buds2-or-later`),
    /// or the Sony form (`sony`, `sony-earbuds`).
    public var logName: String {
        switch self {
        case .aap: "aap"
        case .galaxyBuds(let model): model.rawValue
        case .sony(let form, _): form.rawValue
        }
    }

    public init?(logName: some StringProtocol) {
        if logName == "aap" {
            self = .aap
        } else if let model = GalaxyBudsModel(rawValue: String(logName)) {
            self = .galaxyBuds(model)
        } else if let form = SonyForm(rawValue: String(logName)) {
            // The service does not change the bytes: the handshake's reply tells v1 from v2.
            self = .sony(form, service: SonyServiceUUID.v2)
        } else {
            return nil
        }
    }

    /// Every `logName`, AAP first.
    public static var logNames: [String] { ["aap"] + GalaxyBudsModel.allCases.map(\.rawValue) + SonyForm.allCases.map(\.rawValue) }
}
