import AccessoryDrivers

/// The one number the desktop shows for a headset (UPower shows one per device).
enum DesktopBatteryLevel {
    /// Earbuds: the lowest bud that reports a level, since the music stops when it runs out
    /// (the case never counts, it powers nothing you listen with); headphones: their own level.
    /// Levels outside 0...100 count as not reported. Nil when nothing counts.
    static func percentage(of report: BatteryReport?) -> UInt8? {
        guard let report else { return nil }
        let buds = [report.left, report.right].compactMap(valid)
        if let lowest = buds.min() { return lowest }
        return report.headset.flatMap(valid)
    }

    private static func valid(_ level: BatteryLevel?) -> UInt8? {
        guard let percent = level?.percent, (0...100).contains(percent) else { return nil }
        return UInt8(percent)
    }
}
