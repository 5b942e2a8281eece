import Foundation
import PipeWireTestSupport
import Synchronization
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28: on loaded full runs, in-process control servers "answered nothing for 30 s". Not the
/// server: Swift's cooperative pool has one thread per core and never grows while they block
/// (measured), so two tests each blocked on a child held every task of the test process — the
/// servers' sessions too. Test bodies now run on `BlockingCallsExecutor` (`.blockingCalls`).
@Suite("blocking calls in tests", .blockingCalls)
struct BlockingCallsTests {
    @Test("more tests blocked on children than there are cores: an in-process server still answers before any of them ends")
    func serverAnswersWhileTestsBlock() async throws {
        try await ControlFixture.with { fixture in
            let blockers = ProcessInfo.processInfo.activeProcessorCount + 1
            let children = try (0..<blockers).map { index in
                try ChildProcess(name: "sleep-\(index)", arguments: ["sleep", "120"], environment: ["PATH": "/usr/bin:/bin"], logFile: nil)
            }
            defer { for child in children { child.stop(grace: .zero) } }
            let ended = EndedCount()
            let (entered, arrived) = AsyncStream<Void>.makeStream()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for child in children {
                    group.addTask {
                        arrived.yield()
                        // Blocks its thread until the child goes (as Shell.run and stop do).
                        child.waitForExit(timeout: .seconds(300))
                        ended.count.add(1, ordering: .relaxed)
                    }
                }
                // Every blocker is in its wait (on the cooperative pool, the last would wait
                // for a thread until a child ended).
                var count = 0
                for await _ in entered {
                    count += 1
                    if count == blockers { break }
                }
                let client = try RawControlSocket(path: fixture.socketPath)
                #expect(try await client.request(#"{"id":1,"op":"status"}"#)["ok"] == .bool(true))
                #expect(ended.count.load(ordering: .relaxed) == 0, "the answer came only after a blocked test went on")
                for child in children { child.signal(SIGKILL) }
                try await group.waitForAll()
            }
            #expect(ended.count.load(ordering: .relaxed) == blockers)
        }
    }

    @Test("a test body, and its child tasks, run on the executor's threads")
    func bodiesRunOnTheExecutor() async throws {
        #expect(BlockingCallsExecutor.isCurrentThread)
        async let child = BlockingCallsExecutor.isCurrentThread
        #expect(await child, "a child task inherits the executor")
    }
}

private final class EndedCount: Sendable {
    let count = Atomic<Int>(0)
}

