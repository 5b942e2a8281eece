import CEarshotLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Waiting for a process that is not one's child: its pidfd (pidfd_open(2), Linux 5.3)
/// becomes readable once it has exited — zombie or reaped, by whichever parent. Tests watch a
/// browser's whole process group go with it, no polling of /proc.
public enum ProcessExitDescriptor {
    /// A close-on-exec descriptor of `pid` for poll(2); the caller closes it. Nil when there is
    /// no such process (any more).
    public static func open(_ pid: Int32) throws(SystemError) -> FileDescriptor? {
        let descriptor = CEarshotLinux_pidfd_open(pid)
        if descriptor >= 0 { return FileDescriptor(rawValue: descriptor) }
        if Errno.current == .noSuchProcess { return nil }
        throw SystemError("pidfd_open", detail: "pid \(pid)", errno: .current)
    }
}
