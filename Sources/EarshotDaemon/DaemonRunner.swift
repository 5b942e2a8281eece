import FoundationEssentials
import Logging
import RoutingPolicy
import SystemBridge

/// Everything `earshot daemon` runs: the engine, its control socket, the config watcher and
/// clean shutdown on SIGTERM/SIGINT. Returns the process exit status.
public enum DaemonRunner {
    /// The exit status for a config that cannot be used at start, or a state directory that is
    /// not the user's own or has no place at all (sysexits' EX_CONFIG, which systemd names
    /// "CONFIG"): the unit's `RestartPreventExitStatus` keeps systemd from restarting a daemon
    /// that would only fail again until the file or the directory is fixed.
    public static let configInvalidStatus: Int32 = 78

    public static func run(_ options: DaemonOptions, logger: Logger) async -> Int32 {
        // The loader is done with the program's relocation table: its pages need not stay.
        do {
            let released = try CurrentProcess.releaseRelocationTable()
            logger.debug("relocation table: \(released / 1024) KiB given back")
        } catch {
            logger.debug("relocation table kept: \(error)")
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(options: options, logger: logger)
        } catch {
            for problem in error.errors { logger.error("config: \(problem)") }
            return configInvalidStatus
        }
        // Before anything is read from the state directory or written to it.
        do {
            try StateStore(path: options.statePath).prepareDirectory()
        } catch {
            logger.error("cannot start: \(error)")
            return configInvalidStatus
        }
        // One daemon per PipeWire, whatever its control socket and with or without D-Bus.
        // Clients, PipeWire, D-Bus and drivers all hold descriptors: the usual soft limit of
        // 1024 is raised to the hard one, and the control socket caps its connections below it.
        let descriptors = CurrentProcess.raiseDescriptorLimit()
        logger.debug("open descriptor limit: \(descriptors.map(String.init) ?? "unknown")")
        let lockPath = InstanceLockPath.for(remote: options.remote, environment: options.environment)
        let instanceLock: InstanceLock
        do {
            guard let lock = try InstanceLock.acquire(path: lockPath) else {
                logger.error("another earshot daemon already routes this PipeWire (\(lockPath) is locked): stop it first")
                return 1
            }
            instanceLock = lock
        } catch {
            logger.error("cannot take the instance lock: \(error)")
            return 1
        }
        defer { withExtendedLifetime(instanceLock) {} }
        // What was saved before any way in opens: a client never sees a daemon without it.
        await daemon.restoreState()
        // The D-Bus service before the control socket: once the socket appears, every way in
        // is ready (tests and scripts wait for the socket).
        let desktop: DesktopIntegration
        do {
            desktop = try await DesktopIntegration.start(daemon: daemon, options: options, logger: logger)
        } catch {
            logger.error("D-Bus: \(error)")
            return 1
        }
        let server: ControlServer
        do {
            server = try await ControlServer.start(path: options.socketPath, control: daemon, logger: logger)
        } catch {
            logger.error("control socket \(options.socketPath): \(error)")
            await desktop.stop()
            return 1
        }
        let configDescription = await daemon.configDescription
        logger.info("earshot daemon: control socket \(options.socketPath), config \(configDescription), state \(options.statePath)")
        let rolling = RollingRecording(
            directory: RollingRecording.directory(statePath: options.statePath), daemon: daemon, logger: logger)
        // Each config the daemon takes, in order, to the drivers and the rolling recording.
        let configs = await daemon.appliedConfigs()
        let following = Task {
            for await config in configs {
                await desktop.drivers.configChanged(config.drivers)
                await rolling.apply(keepHours: config.recordKeepHours)
            }
        }
        // Reloads one at a time, in order: a burst of file events (an editor's save is several)
        // is one reload more at most, reading the file as it is by then. (A task per event could
        // submit an older config after a newer one.)
        let (reloads, reload) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        let reloading = Task {
            for await cause in reloads { await daemon.reloadConfig(because: cause) }
        }
        // Where each config path is watched from: once at start, then whenever it moves (a
        // directory created, deleted or moved away).
        let watcher = ConfigWatcher(paths: daemon.watchedConfigPaths, onWatch: { watching in
            if watching.watched == nil {
                logger.warning("config: \(watching); SIGHUP still reloads it and watches again")
            } else {
                logger.info("config: \(watching)")
            }
        }) { cause in
            reload.yield(cause)
        }
        if let failure = watcher.fileWatchFailure {
            logger.warning("config: not watching the file for changes (\(failure)); SIGHUP still reloads it")
        }
        if let failure = watcher.signalFailure { logger.warning("config: SIGHUP does not reload it (\(failure))") }
        let stopSignals: SignalWatcher
        do {
            stopSignals = try SignalWatcher([.terminate, .interrupt], threadName: "earshot-stop") { _ in
                // No new client once stopping: one its stop disconnects waits for the next daemon.
                Task {
                    await server.stopListening()
                    await daemon.releaseHeld()
                    await daemon.stop()
                }
            }
        } catch {
            logger.error("cannot handle SIGTERM and SIGINT: \(error)")
            reload.finish()
            reloading.cancel()
            following.cancel()
            watcher.stop()
            await desktop.stop()
            await server.close()
            return 1
        }
        await daemon.run()
        // No reload after the stop; the drivers and the recording hear of no config after it.
        watcher.stop()
        reload.finish()
        reloading.cancel()
        await reloading.value
        await daemon.endConfigListeners()
        await following.value
        await rolling.stop()
        await daemon.flushState()
        stopSignals.stop()
        await desktop.stop()
        await server.close()
        logger.info("earshot daemon stopped")
        return 0
    }
}
