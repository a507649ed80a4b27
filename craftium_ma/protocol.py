"""Wire formats between Python and the patched engine (see docs/protocol.md).

Agent clients speak a small binary format over a ZeroMQ REQ/REP pair: one
28-byte request (an action), one reply of a 40-byte header plus the raw RGB
frame. The server's control socket speaks JSON, one request per step.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import numpy as np

AGENT_PROTOCOL_VERSION = 2
CONTROL_PROTOCOL_VERSION = 1

#: The 21 keys an agent can hold, in the order of the request's key bits
#: ("inventory" is accepted but ignored: agents never open menus).
KEYS = (
    "forward", "backward", "left", "right", "jump", "aux1", "sneak", "zoom",
    "dig", "place", "drop", "inventory",
    "slot_1", "slot_2", "slot_3", "slot_4", "slot_5", "slot_6", "slot_7", "slot_8", "slot_9",
)
KEY_BITS = {name: 1 << i for i, name in enumerate(KEYS)}
#: The camera turn, in degrees, of an action's dx = 1 unless a task's manifest says other.
DEFAULT_TURN_DEGREES = 30.0

ACT, OBSERVE, QUIT = 1, 2, 3
PIPELINED = 1  # request flag: draw the frame while the server ticks
# request flag of a reset's zero-time step: the server has sent the episode's map,
# drop the last episode's blocks it did not send again (docs/engine.md)
DROP_UNSENT_BLOCKS = 2
# request flag: nobody looks at this step's frame, do not draw it (a reset's loading
# steps); the reply carries the last frame drawn
NOT_DRAWN = 4
_REQUEST = struct.Struct("<4sHHIIHHff")
_HEADER = struct.Struct("<4sHHIHHfffffHH")
_READY, _DEAD = 1, 2


class ProtocolError(RuntimeError):
    """A peer sent something this version of craftium_ma does not understand."""


class EngineError(RuntimeError):
    """The engine reported an error (a Lua error carries its traceback)."""


class AgentTimeoutError(TimeoutError):
    """The server waited in vain for an agent's client to finish its step."""

    def __init__(self, agent: str, message: str):
        super().__init__(message)
        self.agent = agent


def key_bits(keys) -> int:
    """Bitmask of the held keys; `keys` is an iterable of key names."""
    bits = 0
    for name in keys:
        try:
            bits |= KEY_BITS[name]
        except KeyError:
            raise ValueError(f"unknown key {name!r}; keys are {', '.join(KEYS)}") from None
    return bits


def encode_request(kind: int, step: int, keys: int = 0, frames: int = 0,
                   dx: float = 0.0, dy: float = 0.0, flags: int = 0) -> bytes:
    return _REQUEST.pack(b"CMAA", AGENT_PROTOCOL_VERSION, kind, step, keys, frames, flags, dx, dy)


@dataclass
class Observation:
    """One agent's view after a step, and what the engine knows of its player."""
    step: int
    frame: np.ndarray  # H x W x 3 uint8, top row first
    position: tuple[float, float, float]
    yaw: float
    pitch: float
    hp: int
    breath: int
    ready: bool
    dead: bool


def decode_observation(parts: list[bytes]) -> Observation:
    head = parts[0]
    if head[:4] == b"CMAE":
        raise EngineError(head[6:].decode("utf-8", "replace"))
    if len(parts) != 2 or len(head) != _HEADER.size or head[:4] != b"CMAO":
        raise ProtocolError("malformed observation from an agent client")
    (_, version, flags, step, width, height, x, y, z, yaw, pitch, hp, breath) = _HEADER.unpack(head)
    if version != AGENT_PROTOCOL_VERSION:
        raise ProtocolError(f"agent protocol version mismatch: client speaks {version}, "
                            f"craftium_ma speaks {AGENT_PROTOCOL_VERSION}; rebuild the engine")
    frame = np.frombuffer(parts[1], dtype=np.uint8)
    if frame.size != width * height * 3:
        raise ProtocolError(f"frame of {frame.size} bytes for {width}x{height}")
    return Observation(step, frame.reshape(height, width, 3), (x, y, z), yaw, pitch, hp, breath,
                       bool(flags & _READY), bool(flags & _DEAD))


def encode_control(cmd: str, **fields) -> bytes:
    return json.dumps({"v": CONTROL_PROTOCOL_VERSION, "cmd": cmd, **fields}).encode()


def decode_control(reply: bytes) -> dict:
    try:
        msg = json.loads(reply)
    except ValueError as e:
        raise ProtocolError(f"malformed reply from the server: {reply[:80]!r}") from e
    if not msg.get("ok"):
        if msg.get("timeout"):
            raise AgentTimeoutError(msg["timeout"], msg["error"])
        raise EngineError(msg.get("error", "unknown server error"))
    return msg
