import CEarshotLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension CurrentProcess {
    /// This process's executable (the target of /proc/self/exe); nil when it cannot be read.
    public static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Replaces this process's image with `path` run with `arguments` (the first is its name),
    /// the environment kept (execv): the PID, descriptors and the terminal stay. Returns only
    /// when that fails, with why.
    public static func execute(_ path: String, arguments: [String]) -> Errno {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }
        execv(path, &argv)
        return Errno(rawValue: errno)
    }

    /// Gives back the pages of the program's relocation table, which the loader read once
    /// before main (CEarshotLinux_release_relocation_table says why): the bytes given back.
    /// A daemon calls it once after its start; nothing reads the table again.
    @discardableResult
    public static func releaseRelocationTable() throws(SystemError) -> Int {
        let released = CEarshotLinux_release_relocation_table()
        guard released >= 0 else { throw SystemError("madvise MADV_DONTNEED", detail: "the relocation table", errno: .current) }
        return released
    }
}

extension CurrentProcess {
    /// Blocks the calling thread for `duration` (nanosleep, resumed after a signal): for the
    /// CLI's synchronous retry loops, which have no event to wait on.
    public static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
