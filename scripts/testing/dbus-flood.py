#!/usr/bin/python3
# N D-Bus Updates sent to earshot without waiting for replies, alternating placements and ending
# off-head, then a property read; prints the read's latency (from the last Update sent) and when
# every Update was answered. Usage: dbus-flood.py COUNT ADDRESS (on the session bus, with the
# accessory registered). Used by DBusFloodTests and scripts/bench dbus.
import sys, time, dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib
DBusGMainLoop(set_as_default=True)
n = int(sys.argv[1]); address = sys.argv[2]
bus = dbus.SessionBus()
proxy = bus.get_object("org.earshot.Earshot1", "/org/earshot/Earshot1")
earshot = dbus.Interface(proxy, "org.earshot.Earshot1")
properties = dbus.Interface(proxy, "org.freedesktop.DBus.Properties")
loop = GLib.MainLoop()
state = {"answered": 0, "failed": 0, "start": time.monotonic(), "read": None}
def done(*_):
    state["answered"] += 1
    if state["answered"] + state["failed"] == n: state["updates"] = time.monotonic() - state["start"]; finish()
def failed(error):
    state["failed"] += 1
    if state["answered"] + state["failed"] == n: state["updates"] = time.monotonic() - state["start"]; finish()
def finish():
    if state["read"] is not None and "updates" in state: loop.quit()
for i in range(n):
    placement = "off-head" if i == n - 1 or i % 2 else "on-head"
    earshot.Update(address, "org.example.flood", {"placement": placement}, reply_handler=done, error_handler=failed)
sent = time.monotonic()
def read_done(value):
    state["read"] = time.monotonic() - sent
    finish()
properties.Get("org.earshot.Earshot1", "Mode", reply_handler=read_done, error_handler=lambda e: (print("read failed", e), loop.quit()))
GLib.timeout_add_seconds(90, loop.quit)
loop.run()
print("read %.3f updates %.3f answered %d failed %d" % (state["read"] or -1, state.get("updates", -1), state["answered"], state["failed"]))
