#!/usr/bin/python3
"""An Earshot reporter over D-Bus (Debian: python3-dbus): placement lines from stdin for one accessory.
usage: dbus-reporter.py AA:BB:CC:DD:EE:FF   (then type on-head, off-head, ...; docs/dbus.md)"""
import sys
import dbus

accessory = sys.argv[1]
earshot = dbus.Interface(dbus.SessionBus().get_object("org.earshot.Earshot1", "/org/earshot/Earshot1"), "org.earshot.Earshot1")
reporter = "org.example.python-reporter"
register = lambda placement: earshot.Register(accessory, reporter, ["audio-switching", "placement"], {"placement": placement})
register("off-head")
for placement in (line.strip() for line in sys.stdin):
    try:
        if placement and not placement.startswith("#"):
            print(earshot.Update(accessory, reporter, {"placement": placement})["placement"], flush=True)
    except dbus.DBusException as error:
        if error.get_dbus_name().endswith((".Invalidated", ".Unknown")):  # the daemon forgot it: register again
            register(placement)
        else:
            print(f"{placement}: {error.get_dbus_message()}", file=sys.stderr, flush=True)
