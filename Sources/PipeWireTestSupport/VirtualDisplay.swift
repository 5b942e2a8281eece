import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An X server with no screen (`Xvfb`, Debian's xvfb) for programs that need a display: the
/// browsers. Xvfb picks the first free display number itself (`-displayfd`: its lock file
/// /tmp/.X<n>-lock settles races between sandboxes) and writes it once it accepts clients.
public struct VirtualDisplay: Sendable {
    /// The display number N.
    public let number: Int
    /// `:N`, for `DISPLAY`.
    public var name: String { ":\(number)" }
    public let process: ChildProcess
}

extension PipeWireSandbox {
    /// Starts Xvfb on a free display (`Xvfb -displayfd 1 -nolisten tcp`), once per sandbox
    /// (later calls return the same one), and names it in `DISPLAY` for every child started
    /// afterwards. Returns once the server accepts clients. Stopped by PID with the sandbox.
    /// Not for concurrent use from several tasks of one test.
    @discardableResult
    public func startDisplay(timeout: Duration = .seconds(30)) throws -> VirtualDisplay {
        if let display, !display.process.hasExited { return display }
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { close(readEnd) }
        let xvfb: ChildProcess
        do {
            xvfb = try spawn("Xvfb", ["Xvfb", "-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"], stdoutFD: writeEnd)
        } catch {
            close(writeEnd)
            throw error
        }
        close(writeEnd)
        guard let line = Readiness.readLine(from: readEnd, timeout: timeout), let number = Int(line.trimmingCharacters(in: .whitespaces)) else {
            xvfb.stop()
            throw FixtureError("Xvfb named no display within \(timeout) (exit status \(xvfb.exitStatus.map(String.init) ?? "running"))\n\(xvfb.logTail())")
        }
        let started = VirtualDisplay(number: number, process: xvfb)
        display = started
        environment["DISPLAY"] = started.name
        return started
    }
}
