#!/usr/bin/python3
"""Self-test of the BlueZ stand-in's Sony peer: starts a private bus (dbus-daemon with the
session configuration at a temporary path, as scripts/sandbox makes the tests' system bus), the
stand-in on it, and plays a Sony client against it over a real Profile1.NewConnection. Checks
frames byte for byte against public vectors (/work/notes/sony-facts.md §3-§7), the busy
ConnectProfile, ACK seqs, stuffing, chunked and bad client frames, resends, v1 and table 2.

Run: /usr/bin/python3 scripts/testing/standin_sony_selftest.py  (a few seconds; exit 0 = pass)
"""

import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import standin_sony_framing as mdr  # noqa: E402

V2_UUID = "956c7b26-d49a-4ba8-b03f-b17d393cb6e2"
V1_UUID = "96cc203e-5068-46ad-b32d-e316f5e069ba"
XM6, XM4, WF = "AA:00:00:00:00:06", "AA:00:00:00:00:04", "AA:00:00:00:00:05"


def frame(text):
    return bytes.fromhex(text.replace(" ", ""))


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)
    print("pass: " + what, flush=True)


class Profile(dbus.service.Object):
    def __init__(self, bus, path):
        super().__init__(bus, path)
        self.fds = []

    @dbus.service.method("org.bluez.Profile1", in_signature="oha{sv}")
    def NewConnection(self, device, fd, options):
        self.fds.append(fd.take())

    @dbus.service.method("org.bluez.Profile1")
    def Release(self):
        pass


class StandIn:
    """The stand-in process: commands in, printed lines collected by a thread."""

    def __init__(self, env):
        self.process = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(HERE, "bluez-standin"), "--adapter", "hci0=00:11:22:33:44:55"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self.collect, daemon=True).start()

    def collect(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, pattern, timeout=5):
        """Waits for a printed line matching pattern (a regex), turning the main loop meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            turn_loop()
            try:
                line = self.lines.get(timeout=0.01)
            except queue.Empty:
                continue
            self.seen.append(line)
            if re.fullmatch(pattern, line):
                return line
        raise Failure("the stand-in never printed /%s/; last lines:\n  %s" % (pattern, "\n  ".join(self.seen[-15:])))

    def run(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        self.expect(re.escape("ok " + command))

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.process.kill()


def turn_loop():
    context = GLib.MainContext.default()
    while context.iteration(False):
        pass


def connect_profile(bus, address, uuid):
    """Device1.ConnectProfile → None on success, else the D-Bus error."""
    device = bus.get_object("org.bluez", "/org/bluez/hci0/dev_" + address.replace(":", "_"))
    outcome = []
    device.ConnectProfile(uuid, dbus_interface="org.bluez.Device1",
                          reply_handler=lambda: outcome.append(None), error_handler=outcome.append)
    deadline = time.monotonic() + 5
    while not outcome and time.monotonic() < deadline:
        turn_loop()
        time.sleep(0.005)
    if not outcome:
        raise Failure("ConnectProfile(%s) never returned" % uuid)
    return outcome[0]


class Client:
    """The host's end of the MDR channel."""

    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)
        self.sock.settimeout(0.05)
        self.buffer = b""
        self.ended = False

    def send(self, data, one_byte_at_a_time=False):
        if one_byte_at_a_time:
            for byte in data:
                self.sock.sendall(bytes([byte]))
                time.sleep(0.002)
        else:
            self.sock.sendall(data)

    def frames(self, count, timeout=2.0):
        """The next count travelling frames (3E … 3C), as read."""
        deadline = time.monotonic() + timeout
        while self.buffer.count(bytes([mdr.END])) < count and time.monotonic() < deadline:
            try:
                chunk = self.sock.recv(4096)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.ended = True
                break
            self.buffer += chunk
        out = []
        while len(out) < count and bytes([mdr.END]) in self.buffer:
            cut = self.buffer.index(mdr.END) + 1
            out.append(self.buffer[:cut])
            self.buffer = self.buffer[cut:]
        return out

    def drain(self, seconds):
        """Whatever arrives within seconds, buffered bytes included."""
        got, self.buffer = self.buffer, b""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                got += self.sock.recv(4096)
            except socket.timeout:
                pass
        return got

    def silent(self, seconds):
        return not self.frames(1, timeout=seconds)


def framing_vectors():
    check(mdr.encode(0x0C, 0, b"\x00\x00") == frame("3e 0c 00 00 00 00 02 00 00 0e 3c"), "encode: handshake vector")
    check(mdr.encode(0x0C, 0, b"\x3e\x3c\x3d") == frame("3e 0c 00 00 00 00 03 3d 2e 3d 2c 3d 2d c6 3c"),
          "encode: stuffing of 3E 3C 3D (S1 vector)")
    check(mdr.encode(0x0C, 0, frame("23 01 50 00 3c 01")) == frame("3e 0c 00 00 00 00 06 23 01 50 00 3d 2c 01 c3 3c"),
          "encode: stuffed L/R battery vector")
    check(mdr.ack(0) == frame("3e 01 01 00 00 00 00 02 3c") and mdr.ack(1) == frame("3e 01 00 00 00 00 00 01 3c"),
          "encode: ACK frames for seq 0 and 1")
    check(mdr.decode(frame("3e 0c 00 00 00 00 08 01 00 03 00 10 02 00 00 2a 3c"))[0].payload == frame("01 00 03 00 10 02 00 00"),
          "decode: the CH720N's protocol info")
    check(mdr.decode(frame("3e 0c 00 00 00 00 02 00 00 0f 3c"))[1].startswith("bad checksum"), "decode: bad checksum")
    results = mdr.FrameReader().feed(frame("00 3e 0c 00 00 00 00 02 3e 0c 00 00 00 00 02 06 00 14 3c"))
    check([r[2] is None for r in results] == [False, True, False], "reader: a 3E restarts, stray bytes reported")


def xm6_session(bus, standin, profile):
    standin.run("device add-sony %s" % XM6)
    standin.run("device connect %s" % XM6)
    error = connect_profile(bus, XM6, V2_UUID)
    check(error is not None and error.get_dbus_name() == "org.bluez.Error.Failed"
          and "br-connection-busy" in error.get_dbus_message(), "first ConnectProfile fails br-connection-busy")
    standin.expect(re.escape("sony %s refused ConnectProfile: br-connection-busy" % XM6))
    check(connect_profile(bus, XM6, V2_UUID) is None and len(profile.fds) == 1, "second ConnectProfile hands over the channel")
    standin.expect(re.escape("sony %s connected" % XM6))
    client = Client(profile.fds.pop())

    client.send(frame("3e 0c 00 00 00 00 02 06 00 14 3c"))
    standin.expect(re.escape("sony %s received 0c000600" % XM6))
    check(client.silent(0.3), "silent before the handshake")

    client.send(frame("3e 0c 00 00 00 00 02 00 00 0e 3c"))
    standin.expect(re.escape("sony %s received 0c000000" % XM6))
    standin.expect(re.escape("sony %s handshake v2" % XM6))
    check(client.frames(2) == [frame("3e 01 01 00 00 00 00 02 3c"),
                               frame("3e 0c 00 00 00 00 08 01 00 03 00 00 00 00 00 18 3c")],
          "v2 handshake: ACK seq 1, then 8-byte protocol info (seq 0)")
    client.send(mdr.ack(0))
    standin.expect(re.escape("sony %s received 0101" % XM6))

    # f2 10 with host seq 1, one byte per write: ACK seq 0, reply on the set's seq 1.
    client.send(mdr.encode(0x0C, 1, b"\xf2\x10"), one_byte_at_a_time=True)
    standin.expect(re.escape("sony %s received 0c01f210" % XM6))
    check(client.frames(2) == [frame("3e 01 00 00 00 00 00 01 3c"), frame("3e 0c 01 00 00 00 03 f3 10 01 14 3c")],
          "f2 10 split at every byte: ACK seq 0, f3 10 01 (not worn) on seq 1")
    client.send(mdr.ack(1))

    # A glued pair (a bad-checksum frame, then the support query): the first is dropped, no ACK.
    client.send(frame("3e 0c 00 00 00 00 02 22 00 31 3c") + mdr.encode(0x0C, 0, b"\x06\x00"))
    standin.expect(re.escape("sony %s bad frame 3e0c00000000022200313c: bad checksum 31, expected 30" % XM6))
    check(client.frames(2) == [mdr.ack(0), mdr.encode(0x0C, 0, frame("07 00 03 12 01 20 01 f1 01"))],
          "glued frames: the bad checksum ignored, 06 00 answered with the support list")
    client.send(mdr.ack(0))

    standin.run("sony battery %s 62 61" % XM6)
    check(client.frames(1) == [frame("3e 0c 01 00 00 00 04 25 00 3d 2e 3d 2d b1 3c")],
          "battery push 25 00 3e 3d stuffed (3E, 3D), set seq 1")
    client.send(mdr.ack(1))
    standin.run("sony battery %s 60" % XM6)
    check(client.frames(1) == [frame("3e 0c 00 00 00 00 04 25 00 3d 2c 00 71 3c")], "battery push 25 00 3c 00 stuffed (3C)")
    client.send(mdr.ack(0))

    client.send(mdr.encode(0x0C, 1, b"\x22\x00"))
    check(client.frames(2) == [mdr.ack(1), frame("3e 0c 01 00 00 00 04 23 00 3d 2c 00 70 3c")], "22 00 → 23 00 60 00")
    client.send(mdr.ack(1))

    standin.run("sony wear %s on" % XM6)
    push = frame("3e 0c 00 00 00 00 04 f5 10 01 00 16 3c")  # the fact sheet's computed NTFY (worn)
    check(client.frames(1) == [push], "put on: f5 10 01 00 pushed (fact-sheet vector)")
    started = time.monotonic()
    check(client.frames(1, timeout=1.6) == [push] and 0.8 < time.monotonic() - started < 1.5,
          "unacknowledged push sent again after 1 s")
    standin.expect(re.escape("sony %s resent 0c00f5100100" % XM6))
    client.send(mdr.ack(0))
    check(client.silent(1.3), "no resend once ACKed")

    standin.run("sony wear %s off" % XM6)
    check(client.frames(1) == [frame("3e 0c 01 00 00 00 04 f5 10 01 01 18 3c")], "taken off: f5 10 01 01 on seq 1 (fact-sheet vector)")
    client.send(mdr.ack(1))
    hostile_commands(standin, client)
    standin.run("sony close %s" % XM6)
    check(client.frames(1, timeout=0.5) == [] and client.ended, "sony close ends the channel")


def hostile_commands(standin, client):
    """After the XM6 session above (its next data frame on seq 0)."""
    standin.run("sony split %s" % XM6)
    standin.run("sony raw %s 3e0c" % XM6)
    standin.run("sony raw %s 00" % XM6)
    got = b""
    deadline = time.monotonic() + 1
    while len(got) < 3 and time.monotonic() < deadline:
        try:
            got += client.sock.recv(1)
        except socket.timeout:
            pass
    check(got == frame("3e 0c 00"), "split, then raw: the bytes in order")
    standin.run("sony glue %s" % XM6)
    standin.run("sony raw %s 0102" % XM6)
    check(client.silent(0.2), "glue holds the first write")
    standin.run("sony raw %s 033c" % XM6)
    check(client.frames(1) == [frame("01 02 03 3c")], "glue: two writes as one")
    standin.run("sony ack-storm %s 3" % XM6)
    check(client.frames(3) == [mdr.ack(0), mdr.ack(1), mdr.ack(0)], "ack-storm: 3 ACKs, seqs alternating")
    standin.run("sony garbage %s 16" % XM6)
    check(len(client.drain(0.2)) == 16, "garbage: 16 bytes")
    standin.run("sony flood %s 5 0.05" % XM6)
    states = []
    for _ in range(5):
        got = client.frames(1)
        check(len(got) == 1 and client.silent(0.05), "flood: one push at a time")
        decoded, _ = mdr.decode(got[0])
        states.append(decoded.payload[-1])
        client.send(mdr.ack(decoded.seq))
    standin.expect(re.escape("sony %s flood done" % XM6))
    check(states == [0, 1, 0, 1, 1], "flood: on, off, on, off, off")


def xm4_session(bus, standin, profile):
    standin.run("device add-sony %s xm4" % XM4)
    standin.run("sony busy %s 2" % XM4)
    standin.run("device connect %s" % XM4)
    refusals = [connect_profile(bus, XM4, V1_UUID) for _ in range(2)]
    check(all(e is not None and "br-connection-busy" in e.get_dbus_message() for e in refusals), "sony busy 2: two busy refusals")
    check(connect_profile(bus, XM4, V2_UUID).get_dbus_name() == "org.bluez.Error.NotAvailable",
          "the v2 UUID on a v1 set is not available")
    check(connect_profile(bus, XM4, V1_UUID) is None, "the third ConnectProfile (v1 UUID) succeeds")
    client = Client(profile.fds.pop())
    client.send(frame("3e 0c 00 00 00 00 02 00 00 0e 3c"))
    standin.expect(re.escape("sony %s handshake v1" % XM4))
    check(client.frames(2) == [frame("3e 01 01 00 00 00 00 02 3c"), frame("3e 0c 00 00 00 00 04 01 00 70 00 81 3c")],
          "v1 handshake: ACK, then 01 00 70 00")
    client.send(mdr.ack(0))
    client.send(mdr.encode(0x0C, 1, b"\xf2\x10"))
    check(client.frames(1) == [mdr.ack(1)] and client.silent(0.3), "xm4: f2 10 gets the ACK only")
    client.send(frame("3e 0c 00 00 00 00 02 10 00 1e 3c"))
    check(client.frames(2) == [mdr.ack(0), mdr.encode(0x0C, 1, frame("11 00 50 00"))], "v1 battery 10 00 → 11 00 80 00")
    client.send(mdr.ack(1))


def earbuds_session(bus, standin, profile):
    standin.run("device add-sony %s wf-xm5" % WF)
    standin.run("sony busy %s 0" % WF)
    standin.run("device connect %s" % WF)
    check(connect_profile(bus, WF, V2_UUID) is None, "sony busy 0: ConnectProfile succeeds at once")
    client = Client(profile.fds.pop())
    client.send(frame("3e 0c 00 00 00 00 02 00 00 0e 3c"))
    check(client.frames(2)[1] == frame("3e 0c 00 00 00 00 08 01 00 03 00 10 04 00 00 2c 3c"), "wf-xm5 protocol info")
    client.send(mdr.ack(0))
    client.send(frame("3e 0e 01 00 00 00 02 06 00 17 3c"))
    check(client.frames(2) == [mdr.ack(1), mdr.encode(0x0E, 1, frame("07 00 02 30 01 f0 01"))], "table-2 support list offers F0")
    client.send(mdr.ack(1))
    client.send(frame("3e 0e 00 00 00 00 02 f2 00 02 3c"))
    check(client.frames(2) == [mdr.ack(0), frame("3e 0e 00 00 00 00 03 f3 00 04 08 3c")], "table-2 f2 00 → f3 00 04 (both out)")
    client.send(mdr.ack(0))
    client.send(frame("3e 0c 01 00 00 00 03 c4 01 00 d5 3c"))
    standin.expect(re.escape("sony %s logging on" % WF))
    check(client.frames(1) == [mdr.ack(1)], "c4 01 00 gets the ACK")
    standin.run("sony wear %s out out" % WF)
    check(client.silent(0.2), "push-wear off: no f5 00, no log entry for a wear state that did not change")
    standin.run("sony push-wear %s on" % WF)
    standin.run("sony wear %s in out" % WF)
    got = client.frames(1)
    check(client.silent(0.2), "the log entry waits for the ACK of the f5 00")
    client.send(mdr.ack(1))
    got += client.frames(1)
    client.send(mdr.ack(0))
    check(got == [mdr.encode(0x0E, 1, frame("f5 00 03")), mdr.encode(0x0C, 0, b"\xc9\x01\x08unitWear")],
          "left in: f5 00 03 on table 2, then c9 01 08 unitWear, one at a time")
    standin.run("sony battery %s 70 0 50" % WF)
    got = client.frames(1)
    client.send(mdr.ack(1))
    got += client.frames(1)
    client.send(mdr.ack(0))
    check(got == [mdr.encode(0x0C, 1, frame("25 09 46 00 00 00 1e 1e")), mdr.encode(0x0C, 0, frame("25 0a 32 00 1e"))],
          "earbuds battery: 25 09 then 25 0a")
    standin.run("sony mute %s on" % WF)
    client.send(frame("3e 0e 01 00 00 00 02 f2 00 03 3c"))
    standin.expect(re.escape("sony %s received 0e01f200" % WF))
    check(client.silent(0.3), "muted: no ACK, no answer")
    standin.run("sony close %s" % WF)
    check(connect_profile(bus, WF, V2_UUID) is None, "a muted set's channel connects")
    client = Client(profile.fds.pop())
    client.send(frame("3e 0c 00 00 00 00 02 00 00 0e 3c"))
    standin.expect(re.escape("sony %s received 0c000000" % WF))
    check(client.silent(0.5), "muted: the handshake is never answered")


def buds_still_handed_over(bus, standin):
    """The Sony dispatch beside it leaves the Galaxy Buds hand-over as it was."""
    buds, uuid = "AA:00:00:00:00:0B", "2e73a4ad-332d-41fc-90e2-16bef06523f2"
    profile = Profile(bus, "/test/buds")
    bus.get_object("org.bluez", "/org/bluez").RegisterProfile("/test/buds", uuid, {}, dbus_interface="org.bluez.ProfileManager1")
    standin.run("device add-galaxy-buds %s" % buds)
    standin.run("device connect %s" % buds)
    check(connect_profile(bus, buds, uuid) is None and len(profile.fds) == 1, "Galaxy Buds: ConnectProfile hands over at once")
    standin.expect(re.escape("buds %s connected" % buds))
    client = Client(profile.fds.pop())
    client.send(b"\xfd")
    standin.expect(re.escape("buds %s received fd" % buds))


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    with tempfile.TemporaryDirectory(prefix="standin-sony-") as directory:
        address = "unix:path=" + os.path.join(directory, "bus")
        daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--address=" + address],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        standin = None
        try:
            while not os.path.exists(os.path.join(directory, "bus")):
                time.sleep(0.01)
            env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
            framing_vectors()
            standin = StandIn(env)
            standin.expect("ready")
            bus = dbus.bus.BusConnection(address)
            profile = Profile(bus, "/test/sony")
            manager = bus.get_object("org.bluez", "/org/bluez")
            manager.RegisterProfile("/test/sony", V2_UUID, {"Role": "client"}, dbus_interface="org.bluez.ProfileManager1")
            xm6_session(bus, standin, profile)
            v1_profile = Profile(bus, "/test/sony1")
            manager.RegisterProfile("/test/sony1", V1_UUID, {"Role": "client"}, dbus_interface="org.bluez.ProfileManager1")
            xm4_session(bus, standin, v1_profile)
            earbuds_session(bus, standin, profile)
            buds_still_handed_over(bus, standin)
        except Failure as failure:
            print("FAIL: %s" % failure, flush=True)
            return 1
        finally:
            if standin is not None:
                standin.stop()
            daemon.terminate()
            daemon.wait()
    print("all passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
