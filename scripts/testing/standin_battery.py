"""BlueZ's battery API for the BlueZ stand-in (bluez-standin imports it from its own directory).

Behaves as BlueZ's src/battery.c and doc/org.bluez.BatteryProviderManager.rst,
org.bluez.BatteryProvider.rst and org.bluez.Battery.rst describe it, written independently:
  - org.bluez.BatteryProviderManager1 on each adapter: RegisterBatteryProvider(o) takes the
    caller's object path as a provider root (org.bluez.Error.AlreadyExists for a root already
    registered on that adapter); UnregisterBatteryProvider(o) drops it (org.bluez.Error.DoesNotExist
    for a root not registered by the caller).
  - A registered provider is read as BlueZ's GDBusClient reads it: GetManagedObjects on the
    root, then InterfacesAdded / InterfacesRemoved from the root and PropertiesChanged of the
    provider's objects, all from the registering connection only.
  - Each org.bluez.BatteryProvider1 object names its Device (o). A Device that is not a device
    of that adapter is ignored; a device that has a battery already keeps it (the first
    provider wins, later ones are ignored for good, as in BlueZ: a later object is not looked at
    again when the first goes). Otherwise org.bluez.Battery1 appears on the device path with
    Percentage (y, once a valid one came: 0..100, a byte; anything else is ignored) and Source
    (s, the provider object's Source, if any).
  - The provider leaving the bus, unregistering, or removing its object takes its batteries.
The fluctuation smoothing of BlueZ's src/shared/battery.c is not played: each valid level is
shown as given.
"""

import dbus
import dbus.service

OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
MANAGER = "org.bluez.BatteryProviderManager1"
PROVIDER = "org.bluez.BatteryProvider1"
BATTERY = "org.bluez.Battery1"
CALL_TIMEOUT = 5.0


def say(text):
    print(text, flush=True)


def error(name, text):
    return dbus.exceptions.DBusException(text, name=name)


class Batteries:
    """BlueZ's Battery1 objects, one per device path, each from one provider (or "another")."""

    def __init__(self, world, managers_present=True):
        self.world = world
        # Whether new adapters have the manager (False: BlueZ 5.66 without Experimental).
        self.managers_present = managers_present
        # "normal", "hang" (Register is never answered) or an error name Register answers.
        self.mode = "normal"
        self.hanging = []
        self.by_device = {}  # device path → {"provider": key, "percentage": int or None, "source": str or None}

    def device(self, path):
        return next((d for d in self.world.devices.values() if d.path == path), None)

    def properties(self, device_path):
        battery = self.by_device.get(device_path)
        if battery is None:
            return None
        properties = {}
        if battery["percentage"] is not None:
            properties["Percentage"] = dbus.Byte(battery["percentage"])
        if battery["source"] is not None:
            properties["Source"] = dbus.String(battery["source"])
        return dbus.Dictionary(properties, signature="sv")

    def register(self, device_path, source, provider):
        self.by_device[device_path] = {"provider": provider, "percentage": None, "source": source}
        self.world.InterfacesAdded(dbus.ObjectPath(device_path), dbus.Dictionary({BATTERY: self.properties(device_path)}, signature="sa{sv}"))
        say("battery %s added by %s source %s" % (device_path, provider, source))

    def update(self, device_path, value):
        battery = self.by_device.get(device_path)
        if battery is None:
            return
        if not isinstance(value, dbus.Byte) or int(value) > 100:
            say("battery %s ignored percentage %s" % (device_path, int(value) if isinstance(value, int) else repr(value)))
            return
        if battery["percentage"] == int(value):
            return
        battery["percentage"] = int(value)
        self.device(device_path).PropertiesChanged(BATTERY, dbus.Dictionary({"Percentage": dbus.Byte(int(value))}, signature="sv"),
                                                   dbus.Array([], signature="s"))
        say("battery %s percentage %d" % (device_path, int(value)))

    def unregister(self, device_path, provider=None):
        battery = self.by_device.get(device_path)
        if battery is None or (provider is not None and battery["provider"] != provider):
            return
        del self.by_device[device_path]
        device = self.device(device_path)
        if device is not None:
            self.world.InterfacesRemoved(dbus.ObjectPath(device_path), dbus.Array([BATTERY], signature="s"))
        say("battery %s removed" % device_path)

    def forget_device(self, device_path):
        """The device went: its battery goes with it (InterfacesRemoved of the device says so)."""
        if self.by_device.pop(device_path, None) is not None:
            say("battery %s removed" % device_path)

    def other(self, device_path, percentage, source):
        """Another provider (PipeWire over hands-free) got there first."""
        if self.device(device_path) is None:
            raise ValueError("no device at %s" % device_path)
        if device_path in self.by_device:
            raise ValueError("%s has a battery already" % device_path)
        self.register(device_path, source, "another-provider")
        self.update(device_path, dbus.Byte(percentage))

    def other_gone(self, device_path):
        self.unregister(device_path, "another-provider")


class Provider:
    """One registered provider root, read as BlueZ's GDBusClient reads it."""

    def __init__(self, manager, owner, root):
        self.manager = manager
        self.owner = owner
        self.root = root
        self.key = "%s:%s" % (owner, root)
        self.objects = {}  # object path → its BatteryProvider1 properties
        self.accepted = set()  # object paths whose battery BlueZ took (only these are watched)
        bus = manager.batteries.world.bus
        self.receivers = [
            bus.add_signal_receiver(self.interfaces_added, "InterfacesAdded", OBJECT_MANAGER, bus_name=owner, path=root),
            bus.add_signal_receiver(self.interfaces_removed, "InterfacesRemoved", OBJECT_MANAGER, bus_name=owner, path=root),
            bus.add_signal_receiver(self.properties_changed, "PropertiesChanged", PROPERTIES, bus_name=owner, path_keyword="path"),
        ]
        self.watch = bus.watch_name_owner(owner, self.owner_changed)
        bus.call_async(owner, root, OBJECT_MANAGER, "GetManagedObjects", "", (), self.managed_objects, self.read_failed,
                       timeout=CALL_TIMEOUT)

    def managed_objects(self, objects):
        if self.manager.providers.get(self.root) is not self:
            return
        for path, interfaces in objects.items():
            self.interfaces_added(path, interfaces)

    def read_failed(self, failure):
        say("battery provider %s unreadable: %s" % (self.root, failure.get_dbus_name()))

    def interfaces_added(self, path, interfaces):
        if PROVIDER not in interfaces or path in self.objects:
            return
        properties = dict(interfaces[PROVIDER])
        self.objects[path] = properties
        device_path = properties.get("Device")
        if device_path is None:
            say("battery provider object %s names no Device: ignored" % path)
            return
        device = self.manager.batteries.device(str(device_path))
        if device is None or device.properties["Adapter"] != self.manager.path:
            say("battery for %s ignored: no such device on %s" % (device_path, self.manager.path))
            return
        if str(device_path) in self.manager.batteries.by_device:
            say("battery for %s ignored: already provided" % device_path)
            return
        self.accepted.add(path)
        source = properties.get("Source")
        self.manager.batteries.register(str(device_path), None if source is None else str(source), self.key)
        if "Percentage" in properties:
            self.manager.batteries.update(str(device_path), properties["Percentage"])

    def interfaces_removed(self, path, interfaces):
        if PROVIDER not in interfaces or path not in self.objects:
            return
        properties = self.objects.pop(path)
        if path in self.accepted:
            self.accepted.discard(path)
            self.manager.batteries.unregister(str(properties.get("Device")), self.key)

    def properties_changed(self, interface, changed, invalidated, path=None):
        if interface != PROVIDER or path not in self.objects:
            return
        self.objects[path].update(changed)
        if path in self.accepted and "Percentage" in changed:
            self.manager.batteries.update(str(self.objects[path].get("Device")), changed["Percentage"])

    def owner_changed(self, name):
        if name == "" and self.manager.providers.get(self.root) is self:
            self.manager.drop(self.root)
            say("battery provider %s dropped: its owner left the bus" % self.root)

    def close(self):
        for receiver in self.receivers:
            receiver.remove()
        self.watch.cancel()
        for path in list(self.accepted):
            self.manager.batteries.unregister(str(self.objects[path].get("Device")), self.key)
        self.accepted.clear()


class ManagerState:
    """One adapter's BatteryProviderManager1: its registered providers."""

    def __init__(self, batteries, path):
        self.batteries = batteries
        self.path = path
        self.present = batteries.managers_present
        self.providers = {}  # root → Provider

    def drop(self, root):
        provider = self.providers.pop(root, None)
        if provider is not None:
            provider.close()


class ProviderManager(dbus.service.Object):
    """Mixed into the stand-in's Adapter (the same object path); `self.battery_manager` is
    its ManagerState. Without the manager the calls fail as on a BlueZ that lacks the
    interface (the introspection still lists it: dbus-python declares methods per class)."""

    def battery_interfaces(self):
        return {MANAGER: dbus.Dictionary({}, signature="sv")} if self.battery_manager.present else {}

    @dbus.service.method(MANAGER, in_signature="o", sender_keyword="sender", async_callbacks=("reply", "fail"))
    def RegisterBatteryProvider(self, root, sender=None, reply=None, fail=None):
        state = self.battery_manager
        mode = state.batteries.mode
        if not state.present:
            return fail(error("org.freedesktop.DBus.Error.UnknownMethod", "Method \"RegisterBatteryProvider\" doesn't exist"))
        if mode == "hang":
            state.batteries.hanging.append((reply, fail))
            say("battery provider %s left unanswered on %s" % (root, state.path))
            return
        if mode != "normal":
            return fail(error(mode, "the stand-in was told to refuse"))
        if str(root) in state.providers:
            return fail(error("org.bluez.Error.AlreadyExists", "Provider already exists"))
        state.providers[str(root)] = Provider(state, str(sender), str(root))
        say("battery provider %s registered by %s on %s" % (root, sender, state.path))
        reply()

    @dbus.service.method(MANAGER, in_signature="o", sender_keyword="sender")
    def UnregisterBatteryProvider(self, root, sender=None):
        state = self.battery_manager
        if not state.present:
            raise error("org.freedesktop.DBus.Error.UnknownMethod", "Method \"UnregisterBatteryProvider\" doesn't exist")
        provider = state.providers.get(str(root))
        if provider is None or provider.owner != str(sender):
            raise error("org.bluez.Error.DoesNotExist", "Provider does not exist")
        state.drop(str(root))
        say("battery provider %s unregistered on %s" % (root, state.path))


def command(batteries, root, words, device_path):
    """`battery …` commands on stdin (the usage in bluez-standin)."""
    verb, rest = words[0], words[1:]
    if verb == "manager" and rest[:1] == ["add"] and len(rest) == 2:
        adapter = root.adapters[rest[1]]
        if adapter.battery_manager.present:
            raise ValueError("%s has the manager already" % rest[1])
        adapter.battery_manager.present = True
        root.InterfacesAdded(dbus.ObjectPath(adapter.path), dbus.Dictionary(adapter.battery_interfaces(), signature="sa{sv}"))
    elif verb == "manager" and len(rest) == 1 and rest[0] in ("normal", "hang"):
        batteries.mode = rest[0]
    elif verb == "manager" and len(rest) == 2 and rest[0] == "fail":
        batteries.mode = rest[1]
    elif verb == "other" and len(rest) in (2, 3):
        batteries.other(device_path(rest[0]), int(rest[1]), rest[2] if len(rest) == 3 else "HFP 1.7")
    elif verb == "other-gone" and len(rest) == 1:
        batteries.other_gone(device_path(rest[0]))
    else:
        raise ValueError("unknown command")
