import PipeWireTestSupport
import Testing

/// `.blockingCalls`: the suite's (or test's) bodies run on `BlockingCallsExecutor`'s threads,
/// not on the cooperative pool, because they block (child processes, sockets, scripts). Every
/// suite that starts a process or opens a socket carries it; pure unit tests need not.
public struct BlockingCallsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BlockingCallsExecutor.shared) { try await function() }
    }
}

extension Trait where Self == BlockingCallsTrait {
    /// Runs the bodies on threads of their own: they block (see `BlockingCallsExecutor`).
    public static var blockingCalls: Self { Self() }
}
