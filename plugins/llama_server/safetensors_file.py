"""Reading a `.safetensors` file into numpy arrays (no torch, no safetensors package).

The format is an 8-byte little-endian header length, a JSON header naming each tensor's
dtype, shape and byte range, then the raw bytes. The file is memory-mapped, so only the
tensors asked for are read.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .llama_errors import BuildError

if TYPE_CHECKING:
    import numpy as np

_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
           "U8": "u1", "BOOL": "?"}
MAX_HEADER_BYTES = 100 << 20


class SafetensorsFile:
    def __init__(self, path: Path) -> None:
        import numpy as np

        self.path = Path(path)
        try:
            with self.path.open("rb") as handle:
                (size,) = struct.unpack("<Q", handle.read(8))
                if not 0 < size <= MAX_HEADER_BYTES:
                    raise ValueError(f"header length {size}")
                header = json.loads(handle.read(size))
        except (OSError, ValueError, struct.error) as exc:
            raise BuildError(f"{self.path} is not a readable safetensors file ({exc})") from exc
        self._base = 8 + size
        self._header = {k: v for k, v in header.items() if k != "__metadata__"}
        self._map = np.memmap(self.path, dtype=np.uint8, mode="r")

    def names(self) -> list[str]:
        return list(self._header)

    def tensor(self, name: str) -> np.ndarray:
        import numpy as np

        try:
            info = self._header[name]
            dtype = _DTYPES[info["dtype"]]
            start, end = (int(x) for x in info["data_offsets"])
            shape = tuple(int(d) for d in info["shape"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BuildError(f"{self.path} has no usable tensor {name!r} ({exc})") from exc
        raw = self._map[self._base + start:self._base + end]
        return np.frombuffer(raw, dtype=dtype).reshape(shape)

    def __iter__(self) -> Iterator[str]:
        return iter(self._header)
