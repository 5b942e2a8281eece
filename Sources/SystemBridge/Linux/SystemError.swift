import CEarshotLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: which call, on which file, and the errno, named. Every door in
/// this folder throws it, so a message always says what was attempted where and why it failed:
/// `rename /run/earshot/state.json (from state.json.tmp-42): Permission denied (EACCES)`.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call as its manual page names it: `rename`, `fsync`, `connect`.
    public var call: String
    /// The file (or socket path) the call was about, if any.
    public var path: String?
    /// Anything else the reader needs (the other path of a rename).
    public var detail: String?
    public var errno: Errno

    public init(_ call: String, path: String? = nil, detail: String? = nil, errno: Errno) {
        self.call = call
        self.path = path
        self.detail = detail
        self.errno = errno
    }

    /// An error from a raw errno value (a caller's own system call, in tests).
    public init(_ call: String, path: String? = nil, detail: String? = nil, code: Int32) {
        self.init(call, path: path, detail: detail, errno: Errno(rawValue: code))
    }

    /// The errno as a number, for callers that compare it with a constant of their own.
    public var code: Int32 { errno.rawValue }

    /// `Permission denied (EACCES)`.
    public var reason: String { errno.readableDescription }

    public var description: String {
        var text = call
        if let path { text += " \(path)" }
        if let detail { text += " (\(detail))" }
        return "\(text): \(reason)"
    }
}

extension Errno {
    /// The symbolic name: `ENOENT`, or `errno 4242` for a code glibc does not know.
    public var symbolicName: String {
        CEarshotLinux_errno_name(rawValue).map { String(cString: $0) } ?? "errno \(rawValue)"
    }

    /// strerror's sentence and the symbolic name: `No such file or directory (ENOENT)`.
    public var readableDescription: String { "\(description) (\(symbolicName))" }

    /// The thread's errno now, right after a call that failed and set it.
    static var current: Errno { Errno(rawValue: Glibc.errno) }
}

/// Runs a swift-system call, which throws untyped but only ever an `Errno`.
func systemCall<Result>(_ call: String, path: String? = nil, detail: String? = nil, _ body: () throws -> Result) throws(SystemError) -> Result {
    #if DEBUG
    // swift-system's calls retry EINTR themselves: an injected one is a call that went through.
    if let injected = FaultInjection.failure(of: call, path: path), injected != .interrupted {
        throw SystemError(call, path: path, detail: detail, errno: injected)
    }
    #endif
    do {
        return try body()
    } catch let errno as Errno {
        throw SystemError(call, path: path, detail: detail, errno: errno)
    } catch {
        throw SystemError(call, path: path, detail: "\(error)", errno: .ioError)
    }
}

/// Runs a Glibc call that returns -1 and sets errno on failure, retrying when a signal
/// interrupted it.
@discardableResult
func retryingOnInterrupt<Value: BinaryInteger>(
    _ call: String, path: String? = nil, detail: String? = nil, _ body: () -> Value
) throws(SystemError) -> Value {
    while true {
        #if DEBUG
        if let injected = FaultInjection.failure(of: call, path: path) {
            if injected == .interrupted { continue }
            throw SystemError(call, path: path, detail: detail, errno: injected)
        }
        #endif
        let result = body()
        if result >= 0 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw SystemError(call, path: path, detail: detail, errno: error)
    }
}
