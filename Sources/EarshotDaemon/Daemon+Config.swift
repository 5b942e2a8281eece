import Foundation
import RoutingPolicy

/// Config reload (SIGHUP or the file changing): a valid file is applied, an invalid one is
/// logged with file:line:col and the last good config stays.
extension Daemon {
    public func reloadConfig(because cause: String) async {
        let source = ConfigSource.resolve(
            explicit: options.configPath, environment: options.environment, fileExists: FileManager.default.fileExists(atPath:))
        let config: PolicyConfig
        do {
            config = try source.load()
        } catch {
            for problem in error.errors { logger.error("config not reloaded (\(cause)): \(problem)") }
            logger.error("keeping the last good config from \(configSource)")
            return
        }
        guard config != engine.config || source != configSource else { return }
        configSource = source
        logger.info("config reloaded from \(source) (\(cause))")
        let outcome = engine.handle(.configReplaced(config), at: now)
        announceHostAddresses()
        await process(outcome)
        saveState()
    }

    /// The files whose changes trigger a reload: the explicit config, or every search path.
    public var watchedConfigPaths: [String] {
        ConfigSource.candidates(explicit: options.configPath, environment: options.environment)
    }
}
