import Foundation
import SystemBridge
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// One process as /proc/PID/stat shows it: what `ps -o pid,ppid,pgid,stat,comm` prints.
public struct ProcessEntry: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var parent: Int32
    public var group: Int32
    /// The state letter: `R`, `S`, `D`, `Z` (a zombie: exited, not yet reaped), …
    public var state: Character
    /// The command name (comm, at most 15 bytes: `chromium`, `Web Content`, `firefox-esr`).
    public var command: String

    /// Exited (a zombie waiting for its parent, or init, to reap it).
    public var hasExited: Bool { state == "Z" || state == "X" }

    public var description: String { "\(pid) (ppid \(parent), pgid \(group), \(state)) \(command)" }
}

/// The processes of the machine, read from /proc.
public enum ProcessTable {
    /// Every process now.
    public static func snapshot() -> [ProcessEntry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { Int32($0) }.compactMap(entry)
    }

    /// The process `pid`, nil when there is none.
    public static func entry(_ pid: Int32) -> ProcessEntry? {
        // "pid (comm) S ppid pgrp …"; comm may hold spaces and parentheses: it ends at the last ')'.
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count >= 3, let state = fields[0].first, let parent = Int32(fields[1]), let group = Int32(fields[2]) else { return nil }
        return ProcessEntry(pid: pid, parent: parent, group: group, state: state, command: String(text[text.index(after: open)..<close]))
    }

    /// Whether `pid` is `ancestor` itself or one of its descendants (following parents in `table`).
    public static func isDescendant(_ pid: Int32, of ancestor: Int32, in table: [ProcessEntry]) -> Bool {
        let parents = Dictionary(table.map { ($0.pid, $0.parent) }, uniquingKeysWith: { first, _ in first })
        var current = pid
        var steps = 0
        while current > 1, steps < 64 {
            if current == ancestor { return true }
            guard let parent = parents[current] else { return false }
            current = parent
            steps += 1
        }
        return current == ancestor
    }
}

/// A process group: a browser and every helper it starts (they stay in its group). Stopped as
/// a whole, and waited for through each member's pidfd, so that nothing is left behind and no
/// wait is a sleep.
public struct ProcessGroup: Sendable, Hashable {
    public let id: Int32

    public init(id: Int32) { self.id = id }

    /// Every process in the group now, exited ones (zombies) included.
    public func members() -> [ProcessEntry] {
        ProcessTable.snapshot().filter { $0.group == id }
    }

    /// The members that have not exited. Exited ones stay listed as zombies until their
    /// parent reaps them; those whose parent went first are init's to reap.
    public func livingMembers() -> [ProcessEntry] {
        members().filter { !$0.hasExited }
    }

    /// Whether the group exists: any process in it, a zombie included (kill(-id, 0)).
    public var exists: Bool { kill(-id, 0) == 0 || errno == EPERM }

    /// Waits until no member of the group is alive (but `leader`, when given), up to
    /// `timeout`: each round opens a pidfd per living member and waits for one of them to
    /// end, then looks again (a member may have started another meanwhile). True once none is
    /// left.
    @discardableResult
    public func waitUntilEmpty(timeout: Duration, except leader: Int32? = nil) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let living = livingMembers().filter { $0.pid != leader }
            if living.isEmpty { return true }
            let descriptors = living.compactMap { try? ProcessExitDescriptor.open($0.pid) }
            defer { for descriptor in descriptors { try? descriptor.close() } }
            // A member gone between the look and pidfd_open: look again at once.
            guard descriptors.count == living.count else { continue }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            _ = Readiness.wait(for: descriptors.map(\.rawValue), timeout: left)
        }
    }

    /// SIGTERM to the whole group; after `grace`, SIGKILL to every member but the leader
    /// (a leader that reaps, as Browser's reaper does, then reaps them), and 10 s later to the
    /// leader too. Returns once no member lives, and `leader`, when given, has been reaped.
    /// Does nothing to a group that has no living member: its ID could be another's by now.
    public func stop(leader: ChildProcess? = nil, grace: Duration) {
        if !livingMembers().isEmpty {
            kill(-id, SIGTERM)
            if !waitUntilEmpty(timeout: grace) {
                for member in livingMembers() where member.pid != id { kill(member.pid, SIGKILL) }
                waitUntilEmpty(timeout: .seconds(10), except: id)
                kill(-id, SIGKILL)
                waitUntilEmpty(timeout: .seconds(10))
            }
        }
        leader?.waitForExit(timeout: .seconds(10))
    }
}
