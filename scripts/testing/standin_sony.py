"""The Sony peer of the test BlueZ stand-in (scripts/testing/bluez-standin): a WH-1000XM6,
WH-1000XM4, WH-1000XM5 or WF-1000XM5 at the other end of the MDR channel, written from public
notes (/work/notes/sony-facts.md; sources named there) and independently of Earshot's driver.

What a set does, as the notes describe real ones: silent until the host's `00 00` on table 1;
then every data frame from the host is ACKed (the other seq) before its reply; every data frame
the set sends waits for the host's ACK before the next (its own seq toggle), and is sent again
after 1 s unacknowledged, at most 3 times; a request it does not know gets the ACK only.
"""

import collections

import dbus
from gi.repository import GLib

import standin_sony_framing as mdr
from standin_sony_channel import MDRChannel, say
from standin_sony_framing import TABLE1, TABLE2

MDR_V2_UUID = "956c7b26-d49a-4ba8-b03f-b17d393cb6e2"
MDR_V1_UUID = "96cc203e-5068-46ad-b32d-e316f5e069ba"
MDR_UUIDS = (MDR_V2_UUID, MDR_V1_UUID)
AUDIO_UUIDS = ["0000110b-0000-1000-8000-00805f9b34fb", "0000111e-0000-1000-8000-00805f9b34fb"]  # A2DP sink, hands-free

PRIORITY = 0x01         # the support lists' priority byte; no source gives its meaning
THRESHOLD = 30          # battery threshold byte of the *_WITH_THRESHOLD replies
LOG_OPERATION = 0x01    # c9 01: an operation ("interaction") log entry

Model = collections.namedtuple("Model", "name modalias version protocol_info table1_functions "
                                        "table2_functions earbuds table1_wear logs_wear firmware")

# Function ids (§6.2): 0x12 codec, 0x20/0x21/0x22 battery single/LR/case, 0x28/0x29/0x2A the same
# with threshold, 0xC1 action log, 0xF1 playback control by wearing, 0xF6 earpiece fitting (not
# a worn flag); v1 0x11 battery, 0xF3 control by wearing, 0xF4 auto power off; table 2: 0x30
# pairing management, 0xF0 WEARING_STATUS_CHECKER. Protocol info bytes as observed (§5).
MODELS = {
    "xm6": Model("WH-1000XM6", "usb:v054Cp0F8Ad0100", 2, bytes.fromhex("0100030000000000"),
                 [0x12, 0x20, 0xF1], [0x30], False, True, False, "1.0.0"),
    "xm4": Model("WH-1000XM4", "usb:v054Cp0D58d0301", 1, bytes.fromhex("01007000"),
                 [0x11, 0xF3, 0xF4], None, False, False, False, "2.6.1"),
    "xm5": Model("WH-1000XM5", "usb:v054Cp0DF0d0251", 2, bytes.fromhex("0100030020160000"),
                 [0x12, 0x20, 0xF1], [0x30], False, False, False, "1.1.3"),
    "wf-xm5": Model("WF-1000XM5", "usb:v054Cp0E63d0201", 2, bytes.fromhex("0100030010040000"),
                    [0x12, 0x29, 0x2A, 0xC1, 0xF1, 0xF6], [0x30, 0xF0], True, False, True, "2.0.1"),
}
V1_BATTERY_FUNCTIONS = {0x00: 0x11, 0x01: 0x15, 0x02: 0x18}  # battery type → v1 function id
CHARGING = {"not-charging": 0, "discharging": 0, "charging": 1, "unknown": 2, "charged": 3}
WEARING_CHECKER = 0xF0


def dbus_error(name, text):
    return dbus.exceptions.DBusException(text, name=name)


def wear_code(left_in, right_in):
    """WearingStatusCode: 0 both worn, 2 left not worn, 3 right not worn, 4 neither."""
    return {(True, True): 0, (False, True): 2, (True, False): 3, (False, False): 4}[(left_in, right_in)]


class SonySet:
    """The headset: its model, state and switches, kept across connections; `channel` is the
    MDR connection of the moment, if any."""

    def __init__(self, address, model):
        self.address = address
        self.model = model
        self.uuids = [MDR_V2_UUID if model.version == 2 else MDR_V1_UUID] + AUDIO_UUIDS
        self.worn = False                    # headphones
        self.buds_in = (False, False)        # earbuds: left, right
        self.battery = (80, 0)               # headphones: level, charging byte
        self.buds_battery = (80, 75, 60)     # earbuds: left, right, case
        self.busy_per_connect = 1
        self.busy_left = 0
        self.mute = False
        self.push_wear = False
        self.split_next = False
        self.glue_next = False
        self.channel = None

    # BlueZ's side

    def device_connected(self):
        self.busy_left = self.busy_per_connect

    def refusal(self, uuid):
        """Why a ConnectProfile(uuid) fails now, or None (a busy refusal is used up)."""
        if uuid not in self.uuids:
            return dbus_error("org.bluez.Error.NotAvailable", "br-connection-profile-unavailable")
        if self.busy_left > 0:
            self.busy_left -= 1
            say("sony %s refused ConnectProfile: br-connection-busy" % self.address)
            return dbus_error("org.bluez.Error.Failed", "br-connection-busy")
        if self.channel is not None:
            return dbus_error("org.bluez.Error.AlreadyConnected", "Already Connected")
        return None

    def connected_now(self):
        return self.channel is not None

    def adopt(self, sock):
        self.channel = MDRChannel(self, sock)
        say("sony %s connected" % self.address)

    def close_channel(self):
        if self.channel is not None:
            self.channel.close()

    # What the set answers and pushes

    def battery_types(self):
        """The battery inquiry types this set answers, from its support list."""
        if self.model.version == 1:
            return [t for t, function in V1_BATTERY_FUNCTIONS.items() if function in self.model.table1_functions]
        return [function - 0x20 for function in self.model.table1_functions if 0x20 <= function <= 0x2A]

    def battery_payload(self, opcode, kind):
        if self.model.earbuds:
            left, right, case = self.buds_battery
            bodies = {0x01: [left, 0, right, 0], 0x09: [left, 0, right, 0, THRESHOLD, THRESHOLD],
                      0x02: [case, 0], 0x0A: [case, 0, THRESHOLD]}
        else:
            level, charging = self.battery
            bodies = {0x00: [level, charging], 0x08: [level, charging, THRESHOLD]}
        body = bodies.get(kind)
        return None if body is None else bytes([opcode, kind] + body)

    def battery_opcodes(self):
        """(reply, push) opcodes: v2 23/25, v1 11/13."""
        return (0x23, 0x25) if self.model.version == 2 else (0x11, 0x13)

    def answer(self, kind, payload):
        """The data frames (table, payload) that answer a host request after its ACK."""
        model = self.model
        if kind == TABLE1:
            if payload[:1] == b"\x00":
                return [(TABLE1, model.protocol_info)]
            if payload[:1] == b"\x04" and len(payload) >= 2:
                return self.device_info(payload[1])
            if payload[:2] == b"\x06\x00":
                return [(TABLE1, self.support_list(model.table1_functions))]
            reply_opcode, _ = self.battery_opcodes()
            if len(payload) >= 2 and payload[0] == reply_opcode - 1 and payload[1] in self.battery_types():
                return [(TABLE1, self.battery_payload(reply_opcode, payload[1]))]
            if payload[:2] == b"\xf2\x10" and model.table1_wear:
                return [(TABLE1, bytes([0xF3, 0x10, 0x00 if self.worn else 0x01]))]
            if payload == b"\xc4\x01\x00" and self.channel is not None:
                self.channel.logging = True
                say("sony %s logging on" % self.address)
        elif kind == TABLE2 and model.table2_functions is not None:
            if payload[:2] == b"\x06\x00":
                return [(TABLE2, self.support_list(model.table2_functions))]
            if payload[:2] == b"\xf2\x00" and WEARING_CHECKER in model.table2_functions:
                return [(TABLE2, bytes([0xF3, 0x00, wear_code(*self.buds_in)]))]
        return []

    def device_info(self, what):
        if what in (0x01, 0x02):
            text = (self.model.name if what == 0x01 else self.model.firmware).encode()
            return [(TABLE1, bytes([0x05, what, len(text)]) + text)]
        if what == 0x03:
            return [(TABLE1, bytes([0x05, 0x03, 0x00, 0x00]))]
        return []

    @staticmethod
    def support_list(functions):
        body = [0x07, 0x00, len(functions)]
        for function in functions:
            body += [function, PRIORITY]
        return bytes(body)

    def wear_pushes(self, before):
        """The frames a wear change sends: the XM6's table-1 NTFY; for earbuds the table-2
        NTFY (when push-wear is on) and one c9 log entry per bud that moved (once logging is on)."""
        frames = []
        if self.model.table1_wear:
            frames.append((TABLE1, bytes([0xF5, 0x10, 0x01, 0x00 if self.worn else 0x01])))
        if self.model.earbuds:
            if self.push_wear and WEARING_CHECKER in (self.model.table2_functions or []):
                frames.append((TABLE2, bytes([0xF5, 0x00, wear_code(*self.buds_in)])))
            if self.model.logs_wear and self.channel is not None and self.channel.logging:
                for was, now in zip(before, self.buds_in):
                    if was != now:
                        text = b"unitWear" if now else b"unitRemove"
                        frames.append((TABLE1, bytes([0xC9, LOG_OPERATION, len(text)]) + text))
        return frames

    def set_wear(self, words):
        """`on|off` for headphones, `LEFT RIGHT` (in|out each) for earbuds → frames to push."""
        if self.model.earbuds:
            if len(words) != 2 or any(w not in ("in", "out") for w in words):
                raise ValueError("earbuds take LEFT RIGHT, each in or out")
            before = self.buds_in
            self.buds_in = (words[0] == "in", words[1] == "in")
            return self.wear_pushes(before)
        if len(words) != 1 or words[0] not in ("on", "off"):
            raise ValueError("headphones take on or off")
        self.worn = words[0] == "on"
        return self.wear_pushes(None)

    def set_battery(self, words):
        """`LEVEL [CHARGING]` for headphones, `LEFT RIGHT CASE` for earbuds → frames to push."""
        _, push_opcode = self.battery_opcodes()
        if self.model.earbuds:
            if len(words) != 3:
                raise ValueError("earbuds take LEFT RIGHT CASE")
            self.buds_battery = tuple(level_byte(w) for w in words)
        else:
            if len(words) not in (1, 2):
                raise ValueError("headphones take LEVEL [CHARGING]")
            charging = words[1] if len(words) == 2 else "not-charging"
            charging = CHARGING[charging] if charging in CHARGING else level_byte(charging)
            self.battery = (level_byte(words[0]), charging)
        types = self.battery_types()
        # One push per part: the threshold variant where the set lists it (as clients prefer).
        parts = [(0x09, 0x01), (0x0A, 0x02)] if self.model.earbuds else [(0x08, 0x00)]
        frames = []
        for with_threshold, plain in parts:
            kind = with_threshold if with_threshold in types else plain if plain in types else None
            if kind is not None:
                frames.append((TABLE1, self.battery_payload(push_opcode, kind)))
        return frames


def level_byte(text):
    value = int(text)
    if not 0 <= value <= 255:
        raise ValueError("%s is not a byte" % text)
    return value


# The stand-in's commands (bluez-standin routes `device add-sony` and `sony ...` here)

def add_device(root, address, model_key="xm6"):
    """A paired Sony set on hci0 with the model's name, Modalias and UUIDs."""
    if model_key not in MODELS:
        raise ValueError("the model is one of %s" % ", ".join(MODELS))
    model = MODELS[model_key]
    headset = SonySet(address.upper(), model)
    root.add_device(address, model.name, "hci0", model.modalias, headset.uuids)
    root.device(address).sony = headset


def headset_of(root, address):
    headset = root.device(address).sony
    if headset is None:
        raise ValueError("%s is not a Sony set (device add-sony)" % address)
    return headset


def channel_of(headset):
    if headset.channel is None:
        raise ValueError("no Sony channel to %s" % headset.address)
    return headset.channel


def on_off(word):
    if word not in ("on", "off"):
        raise ValueError("%s is not on or off" % word)
    return word == "on"


def command(root, words, line, chance):
    """`sony VERB ADDRESS ...` without the `sony`; True when answered here, False when later."""
    if len(words) < 2:
        raise ValueError("unknown command")
    verb, headset, rest = words[0], headset_of(root, words[1]), words[2:]
    if verb in ("wear", "battery"):
        frames = headset.set_wear(rest) if verb == "wear" else headset.set_battery(rest)
        if headset.channel is not None:
            headset.channel.push(frames)
    elif verb == "raw" and len(rest) == 1:
        channel_of(headset).write(bytes.fromhex(rest[0]))
    elif verb == "garbage" and len(rest) == 1:
        channel_of(headset).write(bytes(chance.randrange(256) for _ in range(int(rest[0]))))
    elif verb == "ack-storm" and len(rest) == 1:
        channel_of(headset).write(b"".join(mdr.ack(index % 2) for index in range(int(rest[0]))))
    elif verb == "split" and not rest:
        headset.split_next = True
    elif verb == "glue" and not rest:
        headset.glue_next = True
    elif verb == "mute" and len(rest) == 1:
        headset.mute = on_off(rest[0])
    elif verb == "push-wear" and len(rest) == 1:
        headset.push_wear = on_off(rest[0])
    elif verb == "busy" and len(rest) == 1:
        headset.busy_per_connect = headset.busy_left = int(rest[0])
    elif verb == "close" and not rest:
        channel_of(headset).close()
    elif verb == "flood" and len(rest) == 2:
        flood(headset, channel_of(headset), int(rest[0]), float(rest[1]))
    else:
        raise ValueError("unknown command")
    return True


def flood(headset, channel, count, seconds):
    """COUNT wear toggles (on, off, ... / both in, both out, ...) spread over SECONDS in 10 ms
    batches, the last one off; says "sony ADDRESS flood done" once its frames went out."""
    batches = max(1, int(seconds * 100))
    on, off = (["in", "in"], ["out", "out"]) if headset.model.earbuds else (["on"], ["off"])
    state = {"sent": 0, "batch": 0}

    def done():
        say("sony %s flood done" % headset.address)

    def tick():
        if headset.channel is not channel:
            say("sony %s flood stopped" % headset.address)
            return False
        due = min(count, (count * (state["batch"] + 1)) // batches)
        while state["sent"] < due:
            index = state["sent"]
            last = index == count - 1
            frames = headset.set_wear(off if last or index % 2 == 1 else on)
            state["sent"] += 1
            channel.push(frames, done if last else None)
        state["batch"] += 1
        return state["sent"] < count
    if count <= 0:
        done()
        return
    GLib.timeout_add(10, tick)
