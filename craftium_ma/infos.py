"""The info schema: each key of infos[agent], its dtype and shape, the same at every
reset and step of a task (docs/environments.md#infos).

Every consumer (TorchRL, RLlib, SB3, the pool's batched infos) takes infos that hold
numbers, bools and fixed-shape numeric arrays, with the same keys from the reset on.
So the engine's keys and the ones a task's manifest declares in `[infos]` are always
there (a task's key has its default until Lua sets it), and text travels elsewhere:
team names as indexes into the manifest's `teams` (env.team_of), xland's mission as
UTF-8 bytes (decode_text), chat through env.chat().
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DTYPES = ("bool", "uint8", "int32", "int64", "float32", "float64")


@dataclass(frozen=True)
class InfoSpec:
    """One key of infos[agent]: a scalar (shape ()) or an array of `shape`, of `dtype`."""
    dtype: str
    shape: tuple[int, ...] = ()
    default: object = 0

    def value(self, given) -> np.generic | np.ndarray:
        """`given` (None: the default) as this key's dtype and shape; a number fills an array."""
        given = self.default if given is None else given
        if not self.shape and not isinstance(given, (list, tuple, np.ndarray)):
            return np.dtype(self.dtype).type(given)
        value = np.asarray(given, self.dtype)
        if value.ndim == 0 and self.shape:
            value = np.full(self.shape, value, self.dtype)
        if value.shape != self.shape:
            raise ValueError(f"has shape {value.shape}, its schema says {self.shape}")
        return value if self.shape else value[()]


#: The keys the engine gives every agent of every task.
ENGINE = {
    "position": InfoSpec("float64", (3,)),  # the player's x, y, z (nodes)
    "yaw": InfoSpec("float64"),  # degrees in [0, 360)
    "pitch": InfoSpec("float64"),  # degrees, up is negative
    "hp": InfoSpec("int64"),
    "engine_restarted": InfoSpec("bool", default=False),  # the reset started new processes
}


def parse_schema(table, where: str) -> dict[str, InfoSpec]:
    """A manifest's [infos] table: key = { dtype = "...", shape = [...], default = ... }."""
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [infos] must be a table of keys")
    schema = {}
    for key, spec in table.items():
        if key in ENGINE or key == "team":
            raise ValueError(f"{where}: info {key!r} is the engine's; declare only the task's own")
        if not isinstance(spec, dict) or spec.get("dtype") not in DTYPES:
            raise ValueError(f"{where}: info {key!r} needs dtype = one of {', '.join(DTYPES)}")
        shape = spec.get("shape", [])
        if not isinstance(shape, list) or not all(isinstance(d, int) and d > 0 for d in shape):
            raise ValueError(f"{where}: info {key!r}: shape must be a list of positive ints")
        info = InfoSpec(spec["dtype"], tuple(shape), spec.get("default", 0))
        try:
            info.value(None)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: info {key!r}: its default {info.default!r} {e}") from None
        schema[key] = info
    return schema


def encode_text(text: str, size: int) -> np.ndarray:
    """`text` as UTF-8 bytes in a uint8 array of `size`, zero-padded (cut at `size`)."""
    data = text.encode()[:size]
    out = np.zeros(size, np.uint8)
    out[:len(data)] = np.frombuffer(data, np.uint8)
    return out


def decode_text(array) -> str:
    """The text of an encode_text() array (or a batch of them: a list of texts)."""
    array = np.asarray(array, np.uint8)
    if array.ndim > 1:
        return [decode_text(row) for row in array]
    return bytes(array).rstrip(b"\0").decode(errors="replace")
