import Foundation
import SystemBridge

/// Threads for test code that blocks: a child's exit, a script run to completion, a socket read
/// with a deadline. Swift's cooperative pool has one thread per core (two here) and, measured on
/// Linux, never adds one while they block: two tests each waiting on a child held every task of
/// the test process — the in-process control servers' sessions among them — until the children
/// ended, so a server under test "answered nothing for 30 s" on a loaded run (issue 28). Test
/// bodies run here instead (the `.blockingCalls` trait sets this executor as their preference),
/// and the cooperative pool is left to the code under test.
///
/// A job runs on an idle thread, else on a new one (at most `maximumThreads`); a thread idle for
/// `idleLifetime` ends. Blocking here costs a thread, never another test's progress.
public final class BlockingCallsExecutor: TaskExecutor, @unchecked Sendable {
    public static let shared = BlockingCallsExecutor()

    /// Past it jobs wait for a thread to come free, behind bodies that may block for seconds.
    /// A full run reaches about 500 (a 400-client test starts its lanes at once); at the
    /// first cap, 256, a D-Bus signal's and a route change's delivery waited out their 10 s
    /// deadlines in the hunt's runs 7 and 17 (issue 28). Threads go after `idleLifetime`
    /// without work.
    static let maximumThreads = 1024
    static let idleLifetime: TimeInterval = 10
    /// Its threads' name in `ps -L` (15 bytes at most).
    static let threadName = "earshot-blockng"
    private static let marker = "earshot.blocking-calls-executor"

    /// Whether the calling thread is one of this executor's.
    public static var isCurrentThread: Bool { Thread.current.threadDictionary[marker] != nil }

    private let condition = NSCondition()
    // Under `condition`:
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var idle = 0
    /// Wake-ups sent to idle threads and not yet taken: a second job must not count on a
    /// thread already woken for the first (it would wait behind a body that blocks).
    private var wakeUps = 0
    private var threads = 0
    private var spawnerStarted = false
    /// Threads asked of the spawner and not yet started, under `spawning`.
    private let spawning = NSCondition()
    private var wanted = 0

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        if idle > wakeUps {
            wakeUps += 1
            condition.signal()
        } else if threads < Self.maximumThreads {
            threads += 1
            startSpawner()
            spawning.withLock {
                wanted += 1
                spawning.signal()
            }
        }
        condition.unlock()
    }

    /// Workers are started by a thread of the executor's own, never by the thread that enqueues:
    /// a Linux thread is born with its creator's name, and a test that looks for its reader
    /// thread by name (gone after close) must not find a worker born of it.
    private func startSpawner() {
        guard !spawnerStarted else { return }
        spawnerStarted = true
        Thread { [self] in
            CurrentThread.setName(Self.threadName)
            spawning.lock()
            while true {
                while wanted == 0 { spawning.wait() }
                wanted -= 1
                spawning.unlock()
                Thread { [self] in
                    Thread.current.threadDictionary[Self.marker] = true
                    work()
                }.start()
                spawning.lock()
            }
        }.start()
    }

    /// Threads alive now (for the executor's own test).
    public var threadCount: Int { condition.withLock { threads } }

    private func work() {
        condition.lock()
        while true {
            while head == jobs.count {
                idle += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: Self.idleLifetime))
                idle -= 1
                if wakeUps > 0 {
                    wakeUps -= 1
                    continue
                }
                if !signalled, head == jobs.count {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let job = jobs[head]
            head += 1
            // Taken jobs are dropped once they are half the array: linear, never quadratic.
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
    }
}
