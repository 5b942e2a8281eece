"""Sony MDR framing for the test BlueZ stand-in's Sony peer, written from public notes
(/work/notes/sony-facts.md §3-§4: ncr/omarchy-headphones PROTOCOL.md, Gadgetbridge Message.java,
mos9527/SonyHeadphonesClient Command.cpp), not from Earshot's driver.

A frame is 3E | type | seq | length (u32 big-endian, unstuffed payload bytes) | payload |
checksum | 3C. The checksum is the sum of type, seq, the length bytes and the payload, mod 256,
over the unstuffed bytes. Between the markers 3C, 3D and 3E travel as 3D followed by the byte
AND EF; markers are never stuffed, so a frame runs from a 3E to the next 3C.
"""

import collections

START, ESCAPE, END = 0x3E, 0x3D, 0x3C
ACK, TABLE1, TABLE2 = 0x01, 0x0C, 0x0E
# Nothing public is longer than a few hundred bytes; a client frame past this is its bug.
LONGEST_FRAME = 4096

Frame = collections.namedtuple("Frame", "kind seq payload")


def frame_text(frame):
    """type seq payload as lowercase hex in one word, as the stand-in prints frames."""
    return bytes([frame.kind, frame.seq]).hex() + bytes(frame.payload).hex()


def checksum(body):
    return sum(body) & 0xFF


def stuff(data):
    out = bytearray()
    for byte in data:
        if byte in (START, ESCAPE, END):
            out += bytes([ESCAPE, byte & 0xEF])
        else:
            out.append(byte)
    return bytes(out)


def encode(kind, seq, payload):
    """The frame as it travels: checksum first, then stuffing, then the markers."""
    payload = bytes(payload)
    body = bytes([kind, seq]) + len(payload).to_bytes(4, "big") + payload
    return bytes([START]) + stuff(body + bytes([checksum(body)])) + bytes([END])


def ack(seq_of_acknowledged):
    """The ACK of a data frame carries the other seq."""
    return encode(ACK, 1 - seq_of_acknowledged, b"")


def decode(raw):
    """One whole travelling frame (3E … 3C) → (Frame, None) or (None, what is wrong)."""
    body = bytearray()
    escaped = False
    for byte in raw[1:-1]:
        if escaped:
            if byte not in (START & 0xEF, ESCAPE & 0xEF, END & 0xEF):
                return None, "bad escape 3d %02x" % byte
            body.append(byte | 0x10)
            escaped = False
        elif byte == ESCAPE:
            escaped = True
        else:
            body.append(byte)
    if escaped:
        return None, "an escape at the end"
    if len(body) < 7:
        return None, "too short"
    length = int.from_bytes(body[2:6], "big")
    if length != len(body) - 7:
        return None, "bad length %d for %d payload bytes" % (length, len(body) - 7)
    if checksum(body[:-1]) != body[-1]:
        return None, "bad checksum %02x, expected %02x" % (body[-1], checksum(body[:-1]))
    return Frame(body[0], body[1], bytes(body[6:-1])), None


class FrameReader:
    """Cuts a byte stream into frames whatever its chunking. A 3E inside an unfinished frame
    starts a new one (a start marker is never stuffed, so the old one lost its 3C)."""

    def __init__(self):
        self.partial = None  # bytearray from a 3E on, or None between frames

    def feed(self, chunk):
        """→ a list of (Frame or None, raw bytes, problem or None), in order."""
        results = []
        stray = 0
        for byte in chunk:
            if byte == START:
                if self.partial is not None:
                    results.append((None, bytes(self.partial), "no end marker before the next 3e"))
                self.partial = bytearray([byte])
            elif self.partial is None:
                stray += 1
            else:
                self.partial.append(byte)
                if byte == END:
                    raw = bytes(self.partial)
                    self.partial = None
                    frame, problem = decode(raw)
                    results.append((frame, raw, problem))
                elif len(self.partial) > LONGEST_FRAME:
                    results.append((None, bytes(self.partial[:32]), "longer than %d bytes" % LONGEST_FRAME))
                    self.partial = None
        if stray:
            results.append((None, b"", "%d bytes outside a frame" % stray))
        return results
