import AccessoryDrivers
import Foundation
import Logging
import RoutingPolicy
import SystemBridge
import Synchronization

/// Drives one connected device: opens its channel, runs the protocol session over it, and
/// reports what it decodes. A failed open or a dropped channel is retried with backoff while
/// the device stays connected (the host stops the driver when it disconnects); nothing here
/// spins: it waits on the channel's reads or on the backoff.
final class DeviceDriver: Sendable {
    /// Backoff between attempts: doubles from the first to the longest.
    static let firstRetry: Duration = .seconds(1)
    static let longestRetry: Duration = .seconds(120)

    struct Context: Sendable {
        let control: any DaemonControl
        let transports: any DriverTransports
        let board: DriverBoard
        let packetLog: (any DriverPacketRecording)?
        let rule: WearRule
        let logger: Logger
    }

    let device: DriverDevice
    private let task: Task<Void, Never>
    /// Whether stopping ends the registration (the device went) or keeps it (the daemon stops).
    private let unregisterOnStop: StopChoice

    /// Set before the task is cancelled, read once it ends; `finished` once it has.
    final class StopChoice: Sendable {
        let unregister = Mutex(true)
        let finished = Atomic(false)
    }

    /// - Parameter predecessor: the driver this device had before (it disconnected and came
    ///   back): this one starts only once that one has ended, so the old one's last act (ending
    ///   its registration) never lands after the new one registered.
    init(device: DriverDevice, family: AccessoryFamily, context: Context, after predecessor: DeviceDriver? = nil) {
        self.device = device
        let unregisterOnStop = StopChoice()
        self.unregisterOnStop = unregisterOnStop
        task = Task {
            await predecessor?.finished()
            if !Task.isCancelled { await Self.run(device: device, family: family, context: context, unregisterOnStop: unregisterOnStop) }
            unregisterOnStop.finished.store(true, ordering: .releasing)
        }
    }

    /// Whether it has ended.
    var isFinished: Bool { unregisterOnStop.finished.load(ordering: .acquiring) }

    /// Tells it to stop without waiting (a connect or a BlueZ call in flight may take its
    /// deadline to return): the host stays responsive to other devices meanwhile. With
    /// `unregister` its registration ends (the device disconnected), else it stays.
    func retire(unregister: Bool = true) {
        unregisterOnStop.unregister.withLock { $0 = unregister }
        task.cancel()
    }

    /// `retire`, then waits until it ended.
    func stop(unregister: Bool = true) async {
        retire(unregister: unregister)
        await task.value
    }

    private static func run(device: DriverDevice, family: AccessoryFamily, context: Context, unregisterOnStop: StopChoice) async {
        let kind = DriverFamily(family)
        let label = "\(kind.productName) \(device.address)"
        var reporter = DriverReporter(address: device.address, family: kind, logger: context.logger)
        context.board.begin(device, family: kind)
        var retry = firstRetry
        var lastProblem: DriverTransportError?
        while !Task.isCancelled {
            context.board.update(device.address) { $0.connection = .connecting }
            let channel: BluetoothChannel
            do {
                channel = try await context.transports.open(device, family: family)
            } catch {
                record(error, label: label, kind: kind, said: &lastProblem, context: context, address: device.address)
                if case .unavailable = error { break }
                try? await Task.sleep(for: retry)
                retry = min(retry * 2, longestRetry)
                continue
            }
            // Told to stop while the connect was in flight: say nothing to the device.
            if Task.isCancelled {
                channel.close()
                break
            }
            if lastProblem != nil { context.logger.info("\(label): connected") }
            lastProblem = nil
            context.board.update(device.address) {
                $0.connection = .connected
                $0.problem = nil
            }
            let delivered = await serve(channel, device: device, family: family, label: label, reporter: &reporter, context: context)
            channel.close()
            if Task.isCancelled { break }
            // A channel that delivered a packet was healthy: start the backoff over.
            if delivered { retry = firstRetry }
            context.board.update(device.address) { $0.connection = .connecting }
            try? await Task.sleep(for: retry)
            retry = min(retry * 2, longestRetry)
        }
        if unregisterOnStop.unregister.withLock({ $0 }) { await reporter.gone(to: context.control) }
        // Stopped: the device went. Given up (no Bluetooth here): the entry stays to say why.
        if Task.isCancelled { context.board.end(device.address) }
    }

    /// Returns once the driver ended (stopped, or given up because nothing could help).
    func finished() async {
        await task.value
    }

    /// Runs the session until the channel ends or the driver is stopped; true when at least
    /// one packet came.
    private static func serve(
        _ channel: BluetoothChannel, device: DriverDevice, family: AccessoryFamily, label: String,
        reporter: inout DriverReporter, context: Context
    ) async -> Bool {
        var session = ProtocolSession(family, rule: context.rule)
        let kind = DriverFamily(family)
        let events: AsyncStream<BluetoothChannel.Event>
        do { events = try channel.incoming(threadName: "earshot-\(kind.rawValue)") } catch {
            context.logger.warning("\(label): cannot read the channel: \(error)")
            return false
        }
        // A stop cancels this task, which ends the iteration; `run` then closes the channel.
        guard await apply(session.start(), channel: channel, device: device, family: family, kind: kind, label: label, reporter: &reporter, context: context) else {
            return false
        }
        var received = false
        for await event in events {
            if Task.isCancelled { break }
            switch event {
            case .received(let bytes):
                received = true
                context.packetLog?.record(address: device.address, family: family, incoming: true, bytes: bytes)
                let before = session.counters
                let outputs = session.receive(bytes)
                let after = session.counters
                context.board.update(device.address) {
                    $0.lastPacket = Date()
                    $0.packets += 1
                    $0.skipped += max(0, after.skippedTotal - before.skippedTotal)
                }
                guard await apply(outputs, channel: channel, device: device, family: family, kind: kind, label: label, reporter: &reporter, context: context) else {
                    return received
                }
            case .ended(let error):
                context.logger.info("\(label): channel closed\(error.map { " (\($0))" } ?? "")")
                return received
            }
        }
        return received
    }

    /// Acts on a session's outputs; false when a send failed (the channel is gone).
    private static func apply(
        _ outputs: [DriverOutput], channel: BluetoothChannel, device: DriverDevice, family: AccessoryFamily, kind: DriverFamily, label: String,
        reporter: inout DriverReporter, context: Context
    ) async -> Bool {
        for output in outputs {
            switch output {
            case .send(let bytes):
                context.packetLog?.record(address: device.address, family: family, incoming: false, bytes: bytes)
                // A few bytes; a device with no room for them within a second is wedged (the
                // send blocks this task's thread meanwhile, so the wait stays short).
                do { try channel.send(bytes, timeout: .seconds(1)) } catch {
                    context.logger.info("\(label): cannot send: \(error)")
                    return false
                }
            case .placement(let placement):
                context.logger.debug("\(label): \(placement.rawValue)")
                await reporter.report(placement, to: context.control)
                let yielded = reporter.yieldedTo != nil
                context.board.update(device.address) { $0.connection = yielded ? .yielded : .connected }
            case .battery(let battery):
                context.board.update(device.address) { $0.battery = battery }
            case .audioSource(let source):
                let playing = source.activity.map { $0 != .none } ?? true
                await reporter.reportSource(playing ? source.address : nil, to: context.control)
            case .note(let note):
                context.logger.info("\(label): \(note)")
            }
        }
        return true
    }

    /// Says what went wrong once per kind of problem (a held channel retried for an hour is
    /// one line, not thirty).
    private static func record(
        _ error: DriverTransportError, label: String, kind: DriverFamily, said: inout DriverTransportError?, context: Context,
        address: BluetoothAddress
    ) {
        let connection: DriverBoard.Entry.Connection
        let line: String
        switch error {
        case .held(let why):
            connection = .held
            line = "\(label): the channel is held by another program (probably \(kind.likelyHolder)); retrying with backoff: \(why)"
        case .unreachable(let why):
            connection = .unreachable
            line = "\(label): not reachable; retrying with backoff: \(why)"
        case .unavailable(let why):
            connection = .unavailable
            line = "\(label): \(why); the \(kind.rawValue) driver stays idle"
        case .failed(let why):
            connection = .failed
            line = "\(label): cannot connect; retrying with backoff: \(why)"
        }
        context.board.update(address) {
            $0.connection = connection
            $0.problem = error.description
        }
        if !sameKind(said, error) { context.logger.info("\(line)") }
        said = error
    }

    private static func sameKind(_ a: DriverTransportError?, _ b: DriverTransportError) -> Bool {
        switch (a, b) {
        case (.held?, .held), (.unreachable?, .unreachable), (.unavailable?, .unavailable), (.failed?, .failed): true
        default: false
        }
    }
}
