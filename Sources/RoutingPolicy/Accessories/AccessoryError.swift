/// Why an accessory request was refused. A refused request changes nothing.
public struct AccessoryError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable, Codable {
        /// The update touches a field whose capability was not declared at registration.
        case accessoryNotCapable = "accessory-not-capable"
        /// The request itself is wrong: bad address, unknown placement or field, empty update,
        /// an accessory another reporter owns.
        case invalidRequest = "invalid-request"
        /// The registration existed and is gone (unregistered, dropped by a config reload).
        case invalidated
        /// Anything else, including an accessory Earshot has never seen registered.
        case unknown
    }

    public var code: Code
    /// What went wrong and what the reporter should do about it.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
