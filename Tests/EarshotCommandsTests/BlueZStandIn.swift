import Foundation
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// scripts/testing/bluez-standin on the sandbox's private system bus: an org.bluez with the
/// adapters a test gives it, paired devices, registered profiles and the headsets at the other
/// end of their channels, driven through its stdin ("add hci1 ADDRESS", "device connect …",
/// "buds status …"). Its stdout (answers and events) goes to its log, which the helpers here
/// wait on (inotify, with a deadline).
final class BlueZStandIn {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/testing/bluez-standin").path

    /// AAP's service UUID, Samsung's Buds2-and-later service UUID (the stand-in's presets list them).
    static let aapUUID = "74ec2172-0bad-4d01-8f77-997b2be0722a"
    static let galaxyBuds2UUID = "2e73a4ad-332d-41fc-90e2-16bef06523f2"

    let process: ChildProcess
    /// Where AAP peers listen (`--loopback-dir`), if given.
    let loopbackDir: String?
    /// The private system bus it is on.
    let systemBusAddress: String?
    private var writeEnd: Int32

    /// Starts it with `adapters` (name → address); it owns org.bluez soon after, not at once
    /// (`waitUntilReady()`). With `loopbackDir`, connected AirPods listen for AAP in it;
    /// `options` go on its command line (`--no-battery-manager`).
    init(sandbox: PipeWireSandbox, adapters: KeyValuePairs<String, String>, loopbackDir: String? = nil, options: [String] = []) throws {
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { Glibc.close(readEnd) }
        self.writeEnd = writeEnd
        self.loopbackDir = loopbackDir
        systemBusAddress = sandbox.environment["DBUS_SYSTEM_BUS_ADDRESS"]
        do {
            // /usr/bin/python3: the Debian interpreter that has python3-dbus and python3-gi.
            process = try sandbox.spawn(
                "bluez-standin",
                ["/usr/bin/python3", Self.script] + adapters.flatMap { ["--adapter", "\($0.key)=\($0.value)"] }
                    + (loopbackDir.map { ["--loopback-dir", $0] } ?? []) + options,
                stdinFD: readEnd)
        } catch {
            Glibc.close(writeEnd)
            throw error
        }
    }

    deinit { stop() }

    func send(_ command: String) throws {
        let bytes = Array((command + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw FixtureError("writing to bluez-standin's stdin: \(String(cString: strerror(errno)))\n\(process.logTail())")
            }
            offset += written
        }
    }

    /// BlueZ vanishes: the process is stopped by PID and its name leaves the bus.
    func stop() {
        if writeEnd >= 0 {
            Glibc.close(writeEnd)
            writeEnd = -1
        }
        process.stop()
    }

    // MARK: - Commands that wait for their answer

    /// Sends `command` and waits for its "ok" line; its "error" line throws.
    func run(_ command: String, timeout: Duration = .seconds(10)) async throws {
        let mark = logMark()
        try send(command)
        let answer = try await waitForLine(since: mark, timeout: timeout, what: "an answer to \(command)") { line in
            line == "ok \(command)" || line.hasPrefix("error \(command): ")
        }
        if answer.hasPrefix("error ") { throw FixtureError("bluez-standin: \(answer)") }
    }

    /// Until it prints "ready": org.bluez is on the bus with every adapter given at start.
    func waitUntilReady(timeout: Duration = .seconds(15)) async throws {
        _ = try await waitForLine(since: 0, timeout: timeout, what: "ready") { $0 == "ready" }
    }

    func addDevice(_ address: String, name: String, adapter: String = "hci0", modalias: String? = nil, uuids: [String] = []) async throws {
        var command = "device add \(address) \(Self.quoted(name)) --adapter \(adapter)"
        if let modalias { command += " --modalias \(modalias)" }
        if !uuids.isEmpty { command += " --uuids \(uuids.joined(separator: ","))" }
        try await run(command)
    }

    /// The AirPods preset (AAP UUID, Apple's Modalias); the stand-in's default name when nil.
    func addAirPods(_ address: String, name: String? = nil) async throws {
        try await run("device add-airpods \(address)" + (name.map { " " + Self.quoted($0) } ?? ""))
    }

    /// The Galaxy Buds2 preset (Samsung's service UUID and Modalias).
    func addGalaxyBuds(_ address: String, name: String? = nil) async throws {
        try await run("device add-galaxy-buds \(address)" + (name.map { " " + Self.quoted($0) } ?? ""))
    }

    /// Connected=true, then ServicesResolved=true; AirPods start listening for AAP.
    func connect(_ address: String) async throws { try await run("device connect \(address)") }
    /// Its peers closed, then ServicesResolved=false, Connected=false.
    func disconnect(_ address: String) async throws { try await run("device disconnect \(address)") }
    func removeDevice(_ address: String) async throws { try await run("device remove \(address)") }

    /// Another program registers a profile for `uuid` (Earshot's RegisterProfile then fails).
    func holdProfile(_ uuid: String) async throws { try await run("profile hold \(uuid)") }
    func releaseProfile(_ uuid: String) async throws { try await run("profile release \(uuid)") }

    // MARK: Sony peer (scripts/testing/standin_sony.py)

    /// The Sony models the stand-in plays: the WH-1000XM6 (table-1 wear status and pushes),
    /// WH-1000XM4 (protocol v1, no wear message), WH-1000XM5 (v2, no wear message), WF-1000XM5
    /// (earbuds, table-2 wearing status checker, wear changes in its operation log).
    enum SonyModel: String {
        case xm6, xm4, xm5
        case wfXM5 = "wf-xm5"
    }

    func addSony(_ address: String, model: SonyModel = .xm6) async throws { try await run("device add-sony \(address) \(model.rawValue)") }
    /// Connects it and waits for the set's lines (`sony ADDRESS connected`, `… handshake v2`).
    func connectSony(_ address: String, until lines: [String]) async throws {
        let mark = logMark()
        try await connect(address)
        try await waitForLines(inOrder: lines, since: mark)
    }
    /// Headphones put on or taken off.
    func sonyWear(_ address: String, on: Bool) async throws { try await run("sony wear \(address) \(on ? "on" : "off")") }
    /// Earbuds: each bud in or out.
    func sonyWear(_ address: String, left: Bool, right: Bool) async throws {
        try await run("sony wear \(address) \(left ? "in" : "out") \(right ? "in" : "out")")
    }
    func sonyBattery(_ address: String, level: Int) async throws { try await run("sony battery \(address) \(level)") }
    func sonyBattery(_ address: String, left: Int, right: Int, chargingCase: Int) async throws {
        try await run("sony battery \(address) \(left) \(right) \(chargingCase)")
    }

    // MARK: Galaxy Buds peer

    enum BudsPlacement: String {
        case wearing, idle, disconnected
        case inCase = "case"
    }

    /// An EXTENDED_STATUS_UPDATED frame; batteries in percent (left, right, case).
    func budsStatus(_ address: String, left: BudsPlacement, right: BudsPlacement, batteries: (Int, Int, Int)? = nil) async throws {
        let levels = batteries.map { " \($0.0) \($0.1) \($0.2)" } ?? ""
        try await run("buds status \(address) \(left.rawValue) \(right.rawValue)\(levels)")
    }

    /// The same frame in two writes 50 ms apart.
    func budsSplit(_ address: String, left: BudsPlacement, right: BudsPlacement) async throws {
        try await run("buds split \(address) \(left.rawValue) \(right.rawValue)")
    }

    func budsRaw(_ address: String, _ bytes: [UInt8]) async throws { try await run("buds raw \(address) \(Self.hex(bytes))") }
    func budsGarbage(_ address: String, count: Int) async throws { try await run("buds garbage \(address) \(count)") }
    func budsClose(_ address: String) async throws { try await run("buds close \(address)") }

    // MARK: AAP peer

    enum AAPEar: String {
        case inEar = "in"
        case outOfEar = "out"
        case inCase = "case"
        /// 0x03: the bud is not connected to the headset.
        case disconnected
    }

    /// Where the AAP peer of `address` listens (`--loopback-dir`).
    func aapSocketPath(_ address: String) -> String? {
        loopbackDir.map { "\($0)/\(address.uppercased().replacingOccurrences(of: ":", with: "_")).aap" }
    }

    func aapEar(_ address: String, primary: AAPEar, secondary: AAPEar) async throws {
        try await run("aap ear \(address) \(primary.rawValue) \(secondary.rawValue)")
    }

    func aapBattery(_ address: String, left: Int, right: Int, chargingCase: Int) async throws {
        try await run("aap battery \(address) \(left) \(right) \(chargingCase)")
    }

    func aapRaw(_ address: String, _ packet: [UInt8]) async throws { try await run("aap raw \(address) \(Self.hex(packet))") }
    func aapGarbage(_ address: String, packets: Int) async throws { try await run("aap garbage \(address) \(packets)") }
    /// Stops listening (a connect is refused, as when LibrePods holds the AirPods).
    func aapHold(_ address: String) async throws { try await run("aap hold \(address)") }
    func aapRelease(_ address: String) async throws { try await run("aap release \(address)") }
    func aapClose(_ address: String) async throws { try await run("aap close \(address)") }

    /// Drops the current AAP connection if there is one: none is no error (the driver's
    /// attempt was refused already, or has not come yet).
    func aapCloseIfAny(_ address: String) async throws {
        do {
            try await aapClose(address)
        } catch let error as FixtureError where "\(error)".contains("no AAP connection to \(address)") {}
    }

    // MARK: - Waiting on its output

    /// Where the log ends now: pass it to `waitForLine(containing:since:)` to see only later lines.
    func logMark() -> Int {
        guard let path = process.logFile?.path, let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return 0 }
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The first whole line after `since` (a `logMark()`) that contains `text`, e.g.
    /// "aap AA:BB:CC:DD:EE:FF connected" or "aap … received 0000…".
    @discardableResult
    func waitForLine(containing text: String, since mark: Int = 0, timeout: Duration = .seconds(10)) async throws -> String {
        try await waitForLine(since: mark, timeout: timeout, what: text) { $0.contains(text) }
    }

    /// Waits until the whole lines after `mark` contain each of `texts` in this order, each on
    /// a line after the previous one's: "aap … connected", then that connection's handshake.
    func waitForLines(inOrder texts: [String], since mark: Int = 0, timeout: Duration = .seconds(20)) async throws {
        guard let log = process.logFile else { throw FixtureError("bluez-standin has no log") }
        let found = await process.waitUntil(changesOf: log.path, timeout: timeout) {
            var remaining = texts[...]
            for line in Self.lines(of: log, from: mark) where remaining.first.map(line.contains) == true {
                remaining = remaining.dropFirst()
            }
            return remaining.isEmpty
        }
        guard found else { throw FixtureError("bluez-standin never printed, in order, \(texts):\n\(process.logTail(lines: 60))") }
    }

    /// Each change of the log wakes the wait (inotify); fails at `timeout` or when it exits.
    private func waitForLine(since mark: Int, timeout: Duration, what: String, _ matches: (String) -> Bool) async throws -> String {
        guard let log = process.logFile else { throw FixtureError("bluez-standin has no log") }
        var found: String?
        _ = await process.waitUntil(changesOf: log.path, timeout: timeout) {
            found = Self.lines(of: log, from: mark).first(where: matches)
            return found != nil
        }
        guard let found else { throw FixtureError("bluez-standin never printed \(what):\n\(process.logTail(lines: 60))") }
        return found
    }

    /// The whole lines written after byte `mark`.
    private static func lines(of log: URL, from mark: Int) -> [String] {
        guard let data = try? Data(contentsOf: log), data.count > mark else { return [] }
        let text = String(decoding: data[mark...], as: UTF8.self)
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// A word for the stand-in's shlex: single-quoted, a quote inside closed and escaped.
    private static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
