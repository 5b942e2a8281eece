/// The names of BlueZ's D-Bus API and of the bus driver that the adapter watcher uses
/// (BlueZ doc/org.bluez.Adapter.rst, the D-Bus specification's ObjectManager and Properties).
enum BlueZInterface {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let addressProperty = "Address"
    static let objectManagerPath = "/"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
    static let busDriver = "org.freedesktop.DBus"
    static let busDriverPath = "/org/freedesktop/DBus"

    /// Everything the watcher listens to. No `sender='org.bluez'`: the tracker compares each
    /// signal's sender with the unique name that owns org.bluez, which a match on a well-known
    /// name cannot do reliably on the client side.
    static let matchRules = [
        "type='signal',sender='\(busDriver)',interface='\(busDriver)',member='NameOwnerChanged',arg0='\(service)'",
        "type='signal',path='\(objectManagerPath)',interface='\(objectManager)',member='InterfacesAdded'",
        "type='signal',path='\(objectManagerPath)',interface='\(objectManager)',member='InterfacesRemoved'",
        "type='signal',interface='\(properties)',member='PropertiesChanged',arg0='\(adapter)'",
    ]
}
