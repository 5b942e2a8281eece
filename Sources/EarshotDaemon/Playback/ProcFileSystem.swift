import RoutingPolicy
import SystemBridge

/// Processes as `/proc` shows them: `PPid` and start time from `/proc/PID/stat`, the Flatpak
/// sandbox from `/proc/PID/root/.flatpak-info` (the file Flatpak puts at the root of every
/// sandbox, the one PipeWire's `pw_check_flatpak` and the portals read). Reads are bounded, and
/// anything but a regular file is refused unread (a process controls its own root).
struct ProcFileSystem: ProcessLookup {
    /// `/proc/PID/stat` is one line of at most a few hundred bytes (a 64-byte comm at most).
    static let statLimit = 4096

    func process(_ pid: Int32) -> ProcessRecord? {
        guard pid > 0, let bytes = try? FileSystem.readRegularFile("/proc/\(pid)/stat", limit: Self.statLimit) else { return nil }
        return ProcessRecord(stat: String(decoding: bytes, as: UTF8.self))
    }

    func flatpak(of pid: Int32) -> FlatpakInstance? {
        guard pid > 0, let bytes = try? FileSystem.readRegularFile("/proc/\(pid)/root/.flatpak-info", limit: FlatpakInstance.sizeLimit) else {
            return nil
        }
        return FlatpakInstance(flatpakInfo: String(decoding: bytes, as: UTF8.self))
    }
}
