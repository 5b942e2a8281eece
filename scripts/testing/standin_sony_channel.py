"""The MDR channel of the test BlueZ stand-in's Sony peer (standin_sony.py): one connection's
reading, ACKs, seq toggle, resends and writes, written from public notes
(/work/notes/sony-facts.md §3-§4), not from Earshot's driver.

The set's data frames go out one at a time: the next waits for the host's ACK of the last (the
ACK carries the other seq), which is sent again after 1 s unacknowledged, at most 3 times, and
then given up (as a WH-910N resent its NTFY for seconds, PR #23 of Plutoberth/SonyHeadphonesClient).
"""

import collections

from gi.repository import GLib

import standin_sony_framing as mdr
from standin_sony_framing import TABLE1

ACK_WAIT_MS = 1000
RESENDS = 3
SPLIT_PAUSE_MS = 2      # between the single-byte writes of a split frame
GLUE_WAIT_MS = 500      # a held write goes alone if nothing follows it by then


def say(text):
    print(text, flush=True)


class MDRChannel:
    """One MDR connection: the set's end of a socketpair handed to the client."""

    def __init__(self, headset, sock):
        self.headset = headset
        self.address = headset.address
        self.sock = sock
        self.sock.setblocking(False)
        self.reader = mdr.FrameReader()
        self.handshaken = False
        self.logging = False
        self.seq = 0                 # the seq of the set's next data frame
        self.queue = collections.deque()  # (table, payload, on_written) waiting for the ACK of `outstanding`
        self.outstanding = None      # dict: frame, seq, text, tries, timer, or None
        self.backlog = bytearray()   # what the socket did not take yet
        self.backlog_watch = None
        self.split_bytes = collections.deque()  # a split frame's bytes still to write, one per write
        self.after_split = []        # writes waiting for the split frame to finish
        self.held = None             # a glued write waiting for the next
        self.held_timer = None
        self.watch = GLib.io_add_watch(self.sock.fileno(), GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self.readable)

    # Reading

    def readable(self, fd, condition):
        try:
            chunk = self.sock.recv(4096)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            say("sony %s closed" % self.address)
            self.close(from_watch=True)
            return False
        for frame, raw, problem in self.reader.feed(chunk):
            if frame is None:
                say("sony %s bad frame %s: %s" % (self.address, raw.hex(), problem))
            else:
                say("sony %s received %s" % (self.address, mdr.frame_text(frame)))
                self.take(frame)
            if self.sock is None:
                break
        return self.sock is not None

    def take(self, frame):
        if frame.kind == mdr.ACK:
            if self.outstanding is not None and frame.seq == 1 - self.outstanding["seq"]:
                self.finish_outstanding()
            return
        handshake = frame.kind == TABLE1 and frame.payload[:1] == b"\x00"
        if self.headset.mute or not (self.handshaken or handshake):
            return
        self.write(mdr.ack(frame.seq))
        if handshake:
            self.handshaken = True
            say("sony %s handshake v%d" % (self.address, self.headset.model.version))
        for table, payload in self.headset.answer(frame.kind, frame.payload):
            self.send_data(table, payload)

    # The set's own data frames: one unacknowledged at a time

    def push(self, frames, on_written=None):
        """Pushes as the set sends them: after the handshake, unless muted. Calls on_written
        once the last of them first went out (at once when nothing goes)."""
        if not self.handshaken or self.headset.mute or not frames:
            if on_written:
                on_written()
            return
        for index, (table, payload) in enumerate(frames):
            self.send_data(table, payload, on_written if index == len(frames) - 1 else None)

    def send_data(self, table, payload, on_written=None):
        self.queue.append((table, payload, on_written))
        self.pump()

    def pump(self):
        if self.outstanding is not None or not self.queue or self.sock is None:
            return
        table, payload, on_written = self.queue.popleft()
        frame = mdr.encode(table, self.seq, payload)
        text = mdr.frame_text(mdr.Frame(table, self.seq, payload))
        self.outstanding = {"frame": frame, "seq": self.seq, "text": text, "tries": 0,
                            "timer": GLib.timeout_add(ACK_WAIT_MS, self.unacknowledged)}
        self.write(frame)
        if on_written:
            on_written()

    def unacknowledged(self):
        sent = self.outstanding
        if sent is None or self.sock is None:
            return False
        if self.headset.mute:
            return True  # a muted set sends nothing, resends included; it waits
        if sent["tries"] < RESENDS:
            sent["tries"] += 1
            say("sony %s resent %s" % (self.address, sent["text"]))
            self.write(sent["frame"])
            return True
        say("sony %s gave up on %s" % (self.address, sent["text"]))
        sent["timer"] = None
        self.finish_outstanding()
        return False

    def finish_outstanding(self):
        if self.outstanding["timer"] is not None:
            GLib.source_remove(self.outstanding["timer"])
        self.outstanding = None
        self.seq ^= 1
        self.pump()

    # Writing, with the split and glue switches

    def write(self, data):
        if self.sock is None:
            raise ValueError("the Sony channel to %s is closed" % self.address)
        if self.split_bytes:
            self.after_split.append(data)
        elif self.headset.split_next:
            self.headset.split_next = False
            self.split_bytes.extend(bytes([b]) for b in data)
            GLib.timeout_add(SPLIT_PAUSE_MS, self.write_split_byte)
        elif self.held is not None:
            GLib.source_remove(self.held_timer)
            data, self.held, self.held_timer = self.held + data, None, None
            self.send_now(data)
        elif self.headset.glue_next:
            self.headset.glue_next = False
            self.held = data
            self.held_timer = GLib.timeout_add(GLUE_WAIT_MS, self.release_held)
        else:
            self.send_now(data)

    def write_split_byte(self):
        if self.sock is None:
            return False
        self.send_now(self.split_bytes.popleft())
        if self.split_bytes:
            return True
        waiting, self.after_split = self.after_split, []
        for data in waiting:
            self.write(data)
        return False

    def release_held(self):
        data, self.held, self.held_timer = self.held, None, None
        if self.sock is not None:
            self.send_now(data)
        return False

    def send_now(self, data):
        if self.backlog:
            self.backlog += data
            return
        try:
            sent = self.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            say("sony %s closed" % self.address)
            self.close()
            return
        if sent < len(data):
            self.backlog += data[sent:]
            self.backlog_watch = GLib.io_add_watch(self.sock.fileno(), GLib.IO_OUT, self.drain)

    def drain(self, fd, condition):
        if self.sock is None:
            return False
        try:
            sent = self.sock.send(bytes(self.backlog))
        except BlockingIOError:
            return True
        except OSError:
            self.backlog_watch = None  # this source ends by returning False
            say("sony %s closed" % self.address)
            self.close()
            return False
        del self.backlog[:sent]
        if self.backlog:
            return True
        self.backlog_watch = None
        return False

    def close(self, from_watch=False):
        if self.sock is None:
            return
        if not from_watch:
            GLib.source_remove(self.watch)
        for source in (self.backlog_watch, self.held_timer, self.outstanding and self.outstanding["timer"]):
            if source is not None:
                GLib.source_remove(source)
        self.sock.close()
        self.sock = None
        self.outstanding = None
        if self.headset.channel is self:
            self.headset.channel = None
