/// Where an accessory is relative to its wearer, as its reporter last said.
public enum Placement: String, Sendable, Hashable, CaseIterable, Codable {
    case inEar = "in-ear"
    case onHead = "on-head"
    case overTheEar = "over-the-ear"
    case offHead = "off-head"

    /// In the ear, on the head and over the ear all count as worn.
    public var isWorn: Bool { self != .offHead }
}

/// What an accessory declared it can do when it registered.
public enum AccessoryCapability: String, Sendable, Hashable, CaseIterable, Codable {
    /// Earshot may move the output to it (and away from it) automatically.
    case audioSwitching = "audio-switching"
    /// Its reporter keeps `placement` up to date.
    case placement
}

/// A set of capabilities, small enough to copy freely in the scoring loop.
public struct AccessoryCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let audioSwitching = AccessoryCapabilities(rawValue: 1)
    public static let placement = AccessoryCapabilities(rawValue: 2)

    public init(_ capabilities: some Sequence<AccessoryCapability>) {
        self = []
        for capability in capabilities { insert(Self.of(capability)) }
    }

    public static func of(_ capability: AccessoryCapability) -> AccessoryCapabilities {
        switch capability {
        case .audioSwitching: .audioSwitching
        case .placement: .placement
        }
    }

    public var names: [String] {
        AccessoryCapability.allCases.filter { contains(Self.of($0)) }.map(\.rawValue)
    }

    public var description: String { names.isEmpty ? "none" : names.joined(separator: ", ") }
}
