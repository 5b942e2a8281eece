/// The names of BlueZ's D-Bus API and of the bus driver that the BlueZ mirror and the
/// Bluetooth drivers use (BlueZ doc/org.bluez.Adapter.rst, org.bluez.Device.rst,
/// org.bluez.ProfileManager.rst, org.bluez.Profile.rst; the D-Bus specification's
/// ObjectManager and Properties). Constants only.
enum BlueZInterface {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let addressProperty = "Address"
    static let objectManagerPath = "/"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
    static let busDriver = "org.freedesktop.DBus"
    static let busDriverPath = "/org/freedesktop/DBus"

    /// `org.bluez.Device1`: one remote device, at `/org/bluez/hciN/dev_AA_BB_CC_DD_EE_FF`.
    static let device = "org.bluez.Device1"
    /// Device1's properties that the mirror keeps (`Address` is `addressProperty`).
    enum DeviceProperty {
        static let name = "Name"
        static let alias = "Alias"
        static let connected = "Connected"
        static let servicesResolved = "ServicesResolved"
        static let uuids = "UUIDs"
        static let modalias = "Modalias"
        static let adapter = "Adapter"
    }
    /// Device1's methods: `ConnectProfile(s uuid)`, `DisconnectProfile(s uuid)`.
    static let connectProfile = "ConnectProfile"
    static let disconnectProfile = "DisconnectProfile"

    /// `org.bluez.ProfileManager1` at `/org/bluez`: where a program registers an external
    /// profile, `RegisterProfile(o profile, s uuid, a{sv} options)` and
    /// `UnregisterProfile(o profile)`.
    static let profileManager = "org.bluez.ProfileManager1"
    static let profileManagerPath = "/org/bluez"
    static let registerProfile = "RegisterProfile"
    static let unregisterProfile = "UnregisterProfile"

    /// `org.bluez.Profile1`: what a registered profile's object exports for BlueZ to call,
    /// `NewConnection(o device, h fd, a{sv} properties)`, `RequestDisconnection(o device)`
    /// and `Release()`.
    static let profile = "org.bluez.Profile1"
    static let newConnection = "NewConnection"
    static let requestDisconnection = "RequestDisconnection"
    static let release = "Release"

    /// Everything the mirror listens to. No `sender='org.bluez'`: the mirror compares each
    /// signal's sender with the unique name that owns org.bluez, which a match on a well-known
    /// name cannot do reliably on the client side.
    static let matchRules = ownerAndObjectRules + [
        "type='signal',interface='\(properties)',member='PropertiesChanged',arg0='\(adapter)'",
        "type='signal',interface='\(properties)',member='PropertiesChanged',arg0='\(device)'",
    ]

    /// BlueZ's owner changing and its objects coming and going (the battery provider follows
    /// these too, for the adapters' battery managers and the devices' batteries).
    static let ownerAndObjectRules = [
        "type='signal',sender='\(busDriver)',interface='\(busDriver)',member='NameOwnerChanged',arg0='\(service)'",
        "type='signal',path='\(objectManagerPath)',interface='\(objectManager)',member='InterfacesAdded'",
        "type='signal',path='\(objectManagerPath)',interface='\(objectManager)',member='InterfacesRemoved'",
    ]
}
