import Foundation

/// Runs a blocking call (a child's exit, a socket read) on a thread of its own. Blocking the
/// cooperative pool instead would starve the server under test, whose sessions run there: two
/// such waits on two cores and nothing answers until they time out.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
