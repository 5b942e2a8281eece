import RoutingPolicy
import SystemBridge

/// The client reads its config here, through SystemBridge's `InputFile` (a path, a pipe or `-`
/// for standard input, at most `PolicyConfigLoader.sizeLimit` bytes); RoutingPolicy only parses
/// the text. (The daemon reads its own way: `DaemonConfigFile`.)
extension ConfigSource {
    func load() throws(ConfigErrors) -> PolicyConfig {
        try loadWithText().config
    }

    /// The config and the file's text (empty for the built-in defaults), from one read: a pipe
    /// or standard input cannot be read a second time.
    func loadWithText() throws(ConfigErrors) -> (config: PolicyConfig, text: String) {
        guard case .file(let path) = self else { return (.builtIn, "") }
        let text: String
        do {
            text = try InputFile.text(path, limit: PolicyConfigLoader.sizeLimit)
        } catch {
            throw PolicyConfigLoader.unreadable(InputFile.name(path), error.reason)
        }
        return (try PolicyConfigLoader.parse(text, file: InputFile.name(path)), text)
    }
}
