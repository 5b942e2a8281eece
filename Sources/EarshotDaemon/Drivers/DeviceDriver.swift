import AccessoryDrivers
import FoundationEssentials
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
        let kind = family.kind
        let label = "\(kind.productName) \(device.address)"
        // Reports go out on a lane of their own, coalesced: the reads never wait for the daemon
        // to apply a placement, and a burst of them is one report of the newest (issue 21).
        let lane = ReportLane()
        let reporting = Task {
            var reporter = DriverReporter(address: device.address, family: kind, logger: context.logger)
            for await _ in lane.wakes {
                let (placement, source) = lane.take()
                if let placement {
                    context.logger.debug("\(label): \(placement.rawValue)")
                    await reporter.report(placement, to: context.control)
                    let yielded = reporter.yieldedTo != nil
                    context.board.update(device.address) { $0.connection = yielded ? .yielded : .connected }
                }
                if let source { await reporter.reportSource(source.address, to: context.control) }
            }
            if lane.endsRegistration { await reporter.gone(to: context.control) }
        }
        context.board.begin(device, family: kind)
        var retry = firstRetry
        var lastProblem: DriverTransportError?
        var saidReconnect = false
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
            let outcome = await serve(channel, device: device, family: family, label: label, lane: lane, context: context)
            channel.close()
            if Task.isCancelled { break }
            if let why = outcome.reconnect {
                // Said once per driver: a headset that never answers is retried quietly.
                if !saidReconnect { context.logger.info("\(label): \(why)") }
                saidReconnect = true
            }
            // A channel that delivered a wear or battery packet was healthy: start the backoff over.
            if outcome.delivered, outcome.reconnect == nil { retry = firstRetry }
            context.board.update(device.address) { $0.connection = .connecting }
            try? await Task.sleep(for: retry)
            retry = min(retry * 2, longestRetry)
        }
        lane.finish(endingRegistration: unregisterOnStop.unregister.withLock { $0 })
        await reporting.value
        // Stopped: the device went. Given up (no Bluetooth here): the entry stays to say why.
        if Task.isCancelled { context.board.end(device.address) }
    }

    /// Returns once the driver ended (stopped, or given up because nothing could help).
    func finished() async {
        await task.value
    }

    /// What the serve loop waits on: the channel's events, and the session's deadlines.
    private enum ServeInput: Sendable {
        case channel(BluetoothChannel.Event)
        case deadline(Int)
    }

    /// Most channel events held while the session catches up (it decodes far faster than any
    /// headset sends; a flood beyond this keeps the newest, which carry the state).
    static let readBacklog = 1024

    /// Runs the session until the channel ends, the session gives up on it, or the driver is
    /// stopped.
    private static func serve(
        _ channel: BluetoothChannel, device: DriverDevice, family: AccessoryFamily, label: String, lane: ReportLane, context: Context
    ) async -> (delivered: Bool, reconnect: String?) {
        var session = ProtocolSession(family, rule: context.rule)
        let kind = family.kind
        let events: AsyncStream<BluetoothChannel.Event>
        do { events = try channel.incoming(threadName: "earshot-\(kind.rawValue)") } catch {
            context.logger.warning("\(label): cannot read the channel: \(error)")
            return (false, nil)
        }
        let (inputs, feed) = AsyncStream.makeStream(of: ServeInput.self, bufferingPolicy: .bufferingNewest(readBacklog))
        let forward = Task {
            for await event in events { feed.yield(.channel(event)) }
            feed.finish()
        }
        var timer: Task<Void, Never>?
        var armed: Int?
        /// When the armed deadline is due: the loop checks it after every input too, since a
        /// flood of reads may push the timer's wake-up out of the bounded stream.
        var armedDue: ContinuousClock.Instant?
        defer {
            forward.cancel()
            timer?.cancel()
            feed.finish()
        }
        /// Arms the session's deadline, once per generation.
        func arm() {
            guard let deadline = session.deadline else {
                timer?.cancel()
                armed = nil
                armedDue = nil
                return
            }
            guard deadline.generation != armed else { return }
            armed = deadline.generation
            armedDue = .now + deadline.after
            timer?.cancel()
            timer = Task {
                try? await Task.sleep(for: deadline.after)
                if !Task.isCancelled { feed.yield(.deadline(deadline.generation)) }
            }
        }
        // A stop cancels this task, which ends the iteration; `run` then closes the channel.
        if let why = apply(session.start(), channel: channel, device: device, family: family, label: label, lane: lane, context: context) {
            return (false, why.isEmpty ? nil : why)
        }
        arm()
        var delivered = false
        for await input in inputs {
            if Task.isCancelled { break }
            let outputs: [DriverOutput]
            switch input {
            case .channel(.received(let bytes)):
                context.packetLog?.record(address: device.address, family: family, incoming: true, bytes: bytes)
                let before = session.counters
                outputs = session.receive(bytes)
                let after = session.counters
                // What the headset is for (wear, battery, its host), not protocol chatter (a
                // Sony set's ACKs decode too): only that makes a channel a healthy one.
                if outputs.contains(where: \.isState) { delivered = true }
                context.board.update(device.address) {
                    $0.lastPacket = Date()
                    $0.packets += 1
                    $0.skipped += max(0, after.skippedTotal - before.skippedTotal)
                }
            case .channel(.ended(let error)):
                context.logger.info("\(label): channel closed\(error.map { " (\($0))" } ?? "")")
                return (delivered, nil)
            case .deadline(let generation):
                guard generation == armed, armedDue != nil else { continue }
                armedDue = nil
                outputs = session.timeout(generation: generation)
            }
            if let why = apply(outputs, channel: channel, device: device, family: family, label: label, lane: lane, context: context) {
                return (delivered, why.isEmpty ? nil : why)
            }
            arm()
            // Due while reads kept coming (its wake-up may have been dropped): taken now.
            if let due = armedDue, let generation = armed, ContinuousClock.now >= due {
                armedDue = nil
                if let why = apply(session.timeout(generation: generation), channel: channel, device: device, family: family, label: label, lane: lane, context: context) {
                    return (delivered, why.isEmpty ? nil : why)
                }
                arm()
            }
        }
        return (delivered, nil)
    }

    /// Acts on a session's outputs: sends at once, reports through the lane (coalesced). Nil
    /// while the channel goes on; a reason to end it otherwise ("" for a failed send: the
    /// channel is gone).
    private static func apply(
        _ outputs: [DriverOutput], channel: BluetoothChannel, device: DriverDevice, family: AccessoryFamily, label: String, lane: ReportLane,
        context: Context
    ) -> String? {
        for output in outputs {
            switch output {
            case .send(let bytes):
                context.packetLog?.record(address: device.address, family: family, incoming: false, bytes: bytes)
                // A few bytes; a device with no room for them within a second is wedged (the
                // send blocks this task's thread meanwhile, so the wait stays short).
                do { try channel.send(bytes, timeout: .seconds(1)) } catch {
                    context.logger.info("\(label): cannot send: \(error)")
                    return ""
                }
            case .placement(let placement):
                lane.post(placement)
            case .battery(let battery):
                context.board.update(device.address) { $0.battery = battery }
                context.logger.debug("\(label): battery \(battery.logText)")
            case .audioSource(let source):
                let playing = source.activity.map { $0 != .none } ?? true
                lane.post(source: playing ? source.address : nil)
            case .wearSupport(let support):
                let known = context.board.entry(for: device.address)?.wear
                // A set that has reported wear does not lose it to one unanswered request after
                // a reconnect; and it is said once, not again for each reason worded apart.
                if case .reported = known, case .notReported = support { break }
                if case .notReported(let why) = support {
                    if case .notReported = known {} else {
                        context.logger.info("\(label): reports no wear (\(why)); its battery is still read, and a reporter of your own can say whether it is worn (earshot report)")
                    }
                }
                context.board.update(device.address) { $0.wear = support }
            case .note(let note):
                context.logger.info("\(label): \(note)")
            case .reconnect(let why):
                return why
            }
        }
        return nil
    }

    /// Says what went wrong once per kind of problem (a held channel retried for an hour is
    /// one line, not thirty).
    private static func record(
        _ error: DriverTransportError, label: String, kind: AccessoryFamily.Kind, said: inout DriverTransportError?, context: Context,
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

/// A driver's reports on their way to the daemon, coalesced: what the session decoded is posted
/// here and one task delivers it; a placement or source posted while an earlier one is still
/// being applied replaces it (only the newest matters), so a flapping headset costs one report
/// at a time, never a backlog (issue 21).
final class ReportLane: Sendable {
    private struct Pending {
        var placement: Placement?
        /// The audio source host to send (`.some(nil)`: none), if one was posted.
        var source: SourceChange?
        var endsRegistration = true
    }

    struct SourceChange {
        var address: BluetoothAddress?
    }

    private let pending = Mutex(Pending())
    /// One wake-up at most waits: posts while the deliverer works collapse into it.
    let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init() {
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func post(_ placement: Placement) {
        pending.withLock { $0.placement = placement }
        wake.yield()
    }

    func post(source address: BluetoothAddress?) {
        pending.withLock { $0.source = SourceChange(address: address) }
        wake.yield()
    }

    /// What was posted since the last take.
    func take() -> (placement: Placement?, source: SourceChange?) {
        pending.withLock { state in
            defer {
                state.placement = nil
                state.source = nil
            }
            return (state.placement, state.source)
        }
    }

    /// No more posts; the deliverer ends once it has sent what is pending, then (with
    /// `endingRegistration`) ends the registration.
    func finish(endingRegistration: Bool) {
        pending.withLock { $0.endsRegistration = endingRegistration }
        wake.finish()
    }

    var endsRegistration: Bool { pending.withLock { $0.endsRegistration } }
}
