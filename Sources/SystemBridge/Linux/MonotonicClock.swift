#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC, the clock every process on the machine shares: a stamp taken here can be
/// set against one another process took (the bench's, docs/performance.md). A vDSO call: no
/// system call, no allocation.
public enum MonotonicClock {
    /// Nanoseconds of CLOCK_MONOTONIC now.
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
