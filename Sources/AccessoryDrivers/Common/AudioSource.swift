import RoutingPolicy

/// What the audio-source host is using the headset for.
public enum AudioSourceActivity: UInt8, Sendable, Hashable, CaseIterable {
    case none = 0x00
    case call = 0x01
    case media = 0x02
}

/// The host the headset currently takes its audio from (AAP reports this; Galaxy Buds do not).
public struct AudioSource: Sendable, Hashable {
    public var address: BluetoothAddress
    /// nil when the activity byte had a value no public note explains.
    public var activity: AudioSourceActivity?

    public init(address: BluetoothAddress, activity: AudioSourceActivity?) {
        self.address = address
        self.activity = activity
    }
}
