import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A file descriptor carried by a D-Bus message (type `h`), owned by this object: received
/// ones are duplicates of the message's (which sd-bus closes with the message), so the value
/// outlives it. Closed in deinit unless `take()` moved it out first; equal only to itself.
public final class DBusFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// nil once taken (or after a failed close).
    private let descriptor: Mutex<FileDescriptor?>

    /// Owns `descriptor` from now on.
    public init(adopting descriptor: FileDescriptor) {
        self.descriptor = Mutex(descriptor)
    }

    /// Owns a close-on-exec duplicate of `descriptor` (fcntl F_DUPFD_CLOEXEC), which stays the
    /// caller's.
    public convenience init(duplicating descriptor: Int32) throws(SystemError) {
        let copy = try retryingOnInterrupt("fcntl", detail: "F_DUPFD_CLOEXEC of \(descriptor)") { fcntl(descriptor, F_DUPFD_CLOEXEC, 3) }
        self.init(adopting: FileDescriptor(rawValue: copy))
    }

    deinit {
        if let owned = descriptor.withLock({ $0.take() }) { _ = try? owned.close() }
    }

    /// Moves the descriptor out: the caller owns (and closes) it. nil if taken before.
    public func take() -> FileDescriptor? {
        descriptor.withLock { $0.take() }
    }

    /// Whether `take()` would still return the descriptor.
    public var isTaken: Bool { descriptor.withLock { $0 == nil } }

    /// Runs `body` with the descriptor still owned here (nil if taken), holding it so no
    /// `take()` can race the use.
    func withDescriptor<Result, Failure: Error>(_ body: (FileDescriptor?) throws(Failure) -> Result) throws(Failure) -> Result {
        try descriptor.withLock { descriptor throws(Failure) in try body(descriptor) }
    }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        withDescriptor { $0.map { "fd \($0.rawValue)" } ?? "fd (taken)" }
    }
}
