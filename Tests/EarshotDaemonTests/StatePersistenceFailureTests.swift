@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
import Foundation
import Logging
import RoutingPolicy
import Synchronization
import SystemBridge
import SystemPackage
import TestScheduling
import Testing

@testable import EarshotDaemon

/// Log lines kept for a test to read (level and message).
final class CapturedLog: Sendable {
    let lines = Mutex<[String]>([])
    /// Tests waiting for a line: each with what it waits for, answered at the line's append.
    private let waiters = Mutex<[UInt64: Waiter]>([:])
    private struct Waiter {
        var predicate: @Sendable ([String]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
        /// The deadline's arm, cancelled when a line answers first.
        var deadline: Task<Void, Never>?
    }
    private let nextWaiter = Atomic<UInt64>(0)

    var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) {
        let all = lines.withLock { lines in
            lines.append(line)
            return lines
        }
        let ready = waiters.withLock { waiters in
            let ids = waiters.filter { $0.value.predicate(all) }.map(\.key)
            return ids.compactMap { waiters.removeValue(forKey: $0) }
        }
        for waiter in ready {
            waiter.deadline?.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    /// Waits until the lines logged so far satisfy `predicate` (true), or `timeout` passes
    /// first (false): woken by each line as it is logged, not by polling.
    func waitUntil(timeout: Duration, _ predicate: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        return await withCheckedContinuation { continuation in
            let now = lines.withLock { lines in
                if predicate(lines) { return true }
                waiters.withLock { $0[id] = Waiter(predicate: predicate, continuation: continuation) }
                return false
            }
            if now { return continuation.resume(returning: true) }
            // The deadline's arm: the only sleep, and it ends the wait, never starts work; a
            // line that answers first cancels it.
            let deadline = Task { [weak self] in
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self?.waiters.withLock { $0.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
            waiters.withLock { $0[id]?.deadline = deadline }
        }
    }

    var logger: Logger {
        var logger = Logger(label: "earshot.test") { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.append("\(event.level): \(event.message)")
        }
    }
}

/// Item 7 of issue 12: state that cannot be written is never silent, a garbage file is moved
/// aside, a newer file is kept, a directory in the file's place is reported at start.
@Suite("State persistence failures", .blockingCalls)
struct StatePersistenceFailureTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-state-fail-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static let state = PersistedState(
        registrations: [AccessoryRegistration(
            identity: .address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!), reporter: "org.example.r",
            configuration: AccessoryConfiguration(capabilities: [.placement], placement: .onHead), registeredAt: 0)],
        history: [])

    @Test("a save that cannot be written says why once (errno text and path), shows in status, and the next save tries again")
    func unwritable() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A regular file where the state directory should be: not writable, even for root.
        let blocker = directory.appendingPathComponent("earshot")
        try Data("not a directory".utf8).write(to: blocker)
        let path = blocker.appendingPathComponent("state.json").path
        let log = CapturedLog()
        let writer = StateWriter(store: StateStore(path: path), logger: log.logger)
        await writer.save(Self.state)
        await writer.save(Self.state)
        let problem = try #require(writer.problem)
        #expect(problem.contains(" \(path)"), "\(problem)")
        #expect(problem.contains("Not a directory (ENOTDIR)"), "\(problem)")
        #expect(log.all.filter { $0.hasPrefix("error") }.count == 1, "\(log.all)")
        #expect(log.all.first?.contains("Not a directory (ENOTDIR)") == true, "\(log.all)")
        // Fixed: the next save succeeds, says so, and status is clean again.
        try FileManager.default.removeItem(at: blocker)
        await writer.save(Self.state)
        #expect(writer.problem == nil)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(log.all.last == "notice: state saved to \(path) again", "\(log.all)")
    }

    #if DEBUG  // FaultInjection exists in debug builds only (the tests').
    /// A full disk, a failing disk, a read-only one, a rename refused: made to happen at the
    /// call (FaultInjection), not staged.
    static let diskFaults: [(call: String, errno: Errno, text: String)] = [
        ("write", .noSpace, "No space left on device (ENOSPC)"),
        ("fsync", .ioError, "Input/output error (EIO)"),
        ("open", .readOnlyFileSystem, "Read-only file system (EROFS)"),
        ("rename", .noSpace, "No space left on device (ENOSPC)"),
    ]

    @Test(
        "a disk that fails under a save (ENOSPC at write, EIO at fsync, EROFS at open, ENOSPC at rename): said once with the call, path and errno; the last good file stays whole, no temporary is left; the next save after the fault writes again",
        arguments: diskFaults.indices)
    func diskFailsUnderSave(_ index: Int) async throws {
        let fault = Self.diskFaults[index]
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        let log = CapturedLog()
        let writer = StateWriter(store: StateStore(path: path), logger: log.logger)
        // A good save first: what must survive the failing ones.
        let good = PersistedState()
        await writer.save(good)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let token = FaultInjection.inject(fault.errno, into: fault.call, onPathsContaining: directory.lastPathComponent)
        await writer.save(Self.state)
        await writer.save(Self.state)
        let problem = try #require(writer.problem)
        #expect(problem.hasPrefix("\(fault.call) \(directory.path)/state.json"), "\(problem)")
        #expect(problem.hasSuffix(fault.text), "\(problem)")
        #expect(log.all.filter { $0.hasPrefix("error") }.count == 1, "\(log.all)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(left == ["state.json"], "a temporary left behind: \(left)")

        // Read once the fault is gone: it reaches the store's reads too (EROFS at open).
        FaultInjection.remove(token)
        #expect(try StateStore(path: path).load() == good)
        await writer.save(Self.state)
        #expect(writer.problem == nil)
        #expect(try StateStore(path: path).load() == Self.state)
        #expect(log.all.last == "notice: state saved to \(path) again", "\(log.all)")
    }

    @Test("an fsync interrupted by a signal (EINTR) is retried: the save goes through, nothing is said")
    func interruptedSyncIsRetried() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        let log = CapturedLog()
        let writer = StateWriter(store: StateStore(path: path), logger: log.logger)
        FaultInjection.inject(.interrupted, into: "fsync", onPathsContaining: directory.lastPathComponent, times: 3)
        await writer.save(Self.state)
        #expect(writer.problem == nil)
        #expect(try StateStore(path: path).load() == Self.state)
        #expect(!log.all.contains { $0.hasPrefix("error") }, "\(log.all)")
    }

    @Test("a state directory that cannot be made (EROFS at mkdir, through SystemBridge's door): the save says so with the call, path and errno; the next save after the fault writes")
    func directoryCannotBeMade() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("earshot/state.json").path
        let log = CapturedLog()
        let writer = StateWriter(store: StateStore(path: path), logger: log.logger)
        let token = FaultInjection.inject(.readOnlyFileSystem, into: "mkdir", onPathsContaining: directory.lastPathComponent)
        await writer.save(Self.state)
        #expect(writer.problem == "mkdir \(directory.path)/earshot: Read-only file system (EROFS)", "\(writer.problem ?? "nil")")
        #expect(log.all.filter { $0.hasPrefix("error") }.count == 1, "\(log.all)")
        #expect(!FileManager.default.fileExists(atPath: path))
        FaultInjection.remove(token)
        await writer.save(Self.state)
        #expect(writer.problem == nil)
        #expect(try StateStore(path: path).load() == Self.state)
    }

    @Test("a state file the disk cannot read (EIO at read): said at start with the call, path and errno, kept aside, the daemon starts clean")
    func unreadableFileAtStart() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        try StateStore(path: path).save(Self.state)
        let log = CapturedLog()
        let persister = StatePersister(path: path, logger: log.logger)
        FaultInjection.inject(.ioError, into: "read", onPathsContaining: directory.lastPathComponent, times: 1)
        #expect(persister.load(now: Date(timeIntervalSince1970: 1_795_000_000)) == PersistedState())
        let aside = "\(path).corrupt-20261118T110640Z"
        #expect(try StateStore(path: aside).load() == Self.state, "the unread state is kept whole")
        #expect(
            log.all.contains { $0.contains("(read \(path): Input/output error (EIO)); moved aside to \(aside)") }, "\(log.all)")
    }
    #endif

    @Test("status says state: not saved (reason): the socket's field, the text, D-Bus Status")
    func statusShowsIt() async throws {
        let h = try await DaemonHarness()
        #expect(await h.daemon.status().state == "ok")
        // The state directory's place taken by a file, before anything is saved.
        try Data("x".utf8).write(to: h.directory.appendingPathComponent("state"))
        await h.connect(DaemonHarness.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        let status = await h.daemon.status()
        let state = try #require(status.state)
        #expect(state.hasPrefix("not saved (") && state.contains(" \(h.directory.path)/state/state.json"), "\(state)")
        #expect(state.hasSuffix("Not a directory (ENOTDIR))"), "\(state)")
        #expect(ControlWire.text(status).contains(#""state":"not saved ("#))
        #expect(StatusText.render(status, explain: false).contains("\nstate: \(state)\n"))
        #expect(EarshotBusValues.status(status).dictionary?["state"] == .string(state))
        await h.stop()
    }

    @Test("a garbage state file is moved aside to state.json.corrupt-<time>, not overwritten")
    func garbageMovedAside() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        try Data("garbage{".utf8).write(to: URL(fileURLWithPath: path))
        let log = CapturedLog()
        let persister = StatePersister(path: path, logger: log.logger)
        #expect(persister.load(now: Date(timeIntervalSince1970: 1_795_000_000)) == PersistedState())
        let aside = "\(path).corrupt-20261118T110640Z"
        #expect(try String(contentsOfFile: aside, encoding: .utf8) == "garbage{")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(log.all.contains { $0.contains("moved aside to \(aside)") }, "\(log.all)")
    }

    @Test("a state file of a newer version is kept as it is: not restored, never overwritten, and status says why")
    func newerVersionKept() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        let newer = Data(#"{"version": 3, "registrations": [], "history": [], "future": {"kept": true}}"#.utf8)
        try newer.write(to: URL(fileURLWithPath: path))
        let log = CapturedLog()
        let persister = StatePersister(path: path, logger: log.logger)
        #expect(persister.load() == PersistedState())
        var engine = PolicyEngine(graph: Graph(), config: PolicyConfig())
        _ = engine.handle(.accessory(.register(.address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!), reporter: "org.example.r", AccessoryConfiguration(capabilities: []))), at: 0)
        await persister.save(engine, history: [])
        await persister.flush()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == newer)
        #expect(persister.problem?.contains("newer Earshot") == true, "\(persister.problem ?? "nil")")
        #expect(log.all.contains { $0.hasPrefix("error") && $0.contains("not overwritten") }, "\(log.all)")
    }

    @Test("a directory where the state file should be is reported at start")
    func directoryInItsPlace() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let log = CapturedLog()
        let persister = StatePersister(path: path, logger: log.logger)
        #expect(persister.load() == PersistedState())
        #expect(log.all.contains { $0.hasPrefix("error") && $0.contains("\(path) is a directory") }, "\(log.all)")
        #expect(persister.problem?.contains("Is a directory (EISDIR)") == true, "\(persister.problem ?? "nil")")
    }

    @Test("a burst of saves while the writer is busy is one encode and one write, and every waiter is answered by it")
    func burstCoalesces() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        let queue = DispatchQueue(label: "test.state-writer")
        let held = DispatchSemaphore(value: 0)
        queue.async { held.wait() }  // the writer is busy
        let persister = StatePersister(path: path, logger: CapturedLog().logger, writerQueue: queue)
        var engine = PolicyEngine(graph: Graph(), config: PolicyConfig())
        for index in 0..<200 {
            let identity = AccessoryIdentity.nodeName("sink-\(index)")
            _ = engine.handle(.accessory(.register(identity, reporter: "org.example.r\(index / 50)", AccessoryConfiguration(capabilities: []))), at: Milliseconds(index))
            await persister.save(engine, history: [])
        }
        held.signal()
        await persister.flush()
        #expect(persister.writeCount == 1)
        #expect(try StateStore(path: path).load().registrations.count == 200)
    }
}
