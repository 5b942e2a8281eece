/// One battery's charge as the headset reported it.
public struct BatteryLevel: Sendable, Hashable {
    /// 0...100.
    public var percent: Int
    /// nil when the protocol (or this message) does not say.
    public var isCharging: Bool?

    public init(percent: Int, isCharging: Bool?) {
        self.percent = percent
        self.isCharging = isCharging
    }
}

/// Every battery one status message described; absent components are nil.
public struct BatteryReport: Sendable, Hashable {
    public var left: BatteryLevel?
    public var right: BatteryLevel?
    public var chargingCase: BatteryLevel?
    /// Over-ear headsets (AirPods Max) report one battery for the whole headset.
    public var headset: BatteryLevel?

    public init(left: BatteryLevel? = nil, right: BatteryLevel? = nil, chargingCase: BatteryLevel? = nil, headset: BatteryLevel? = nil) {
        self.left = left
        self.right = right
        self.chargingCase = chargingCase
        self.headset = headset
    }

    public var isEmpty: Bool { left == nil && right == nil && chargingCase == nil && headset == nil }
}

extension BatteryReport {
    /// `left 80% right 75% case 50%` (charging marked), for logs.
    public var logText: String {
        let parts: [(String, BatteryLevel?)] = [("left", left), ("right", right), ("case", chargingCase), ("headset", headset)]
        return parts.compactMap { name, level in
            level.map { "\(name) \($0.percent)%" + ($0.isCharging == true ? " charging" : "") }
        }.joined(separator: " ")
    }
}
