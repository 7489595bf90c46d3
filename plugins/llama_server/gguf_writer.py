"""Writing a GGUF (version 3) file: typed key/value metadata, tensor descriptors, aligned data.

Only what a converted embedding model needs: scalar, string and array values, and F32 / F16
tensors. Dimensions are written innermost first (GGUF's `ne[0]` is numpy's last axis). The
file is written beside its target and renamed into place, so a crash leaves no half model.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import attrs

if TYPE_CHECKING:
    import numpy as np

GGUF_VERSION = 3
ALIGNMENT = 32
# value types of the GGUF key/value section
U32, I32, F32, BOOL, STRING, ARRAY, U64 = 4, 5, 6, 7, 8, 9, 10
# ggml tensor types
GGML_F32, GGML_F16 = 0, 1


@attrs.frozen
class Value:
    """A typed metadata value; `kind` is one of the constants above (ARRAY needs `item_kind`)."""

    kind: int
    value: Any
    item_kind: int = 0


def u32(value: int) -> Value:
    return Value(U32, int(value))


def f32(value: float) -> Value:
    return Value(F32, float(value))


def boolean(value: bool) -> Value:
    return Value(BOOL, bool(value))


def string(value: str) -> Value:
    return Value(STRING, str(value))


def array(item_kind: int, values: Sequence[Any]) -> Value:
    return Value(ARRAY, list(values), item_kind)


def _pack_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _pack_scalar(kind: int, value: Any) -> bytes:
    if kind == STRING:
        return _pack_string(value)
    fmt = {U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q"}.get(kind)
    if fmt is None:
        raise ValueError(f"unsupported GGUF value type {kind}")
    return struct.pack(fmt, value)


def _pack_value(value: Value) -> bytes:
    head = struct.pack("<I", value.kind)
    if value.kind != ARRAY:
        return head + _pack_scalar(value.kind, value.value)
    body = b"".join(_pack_scalar(value.item_kind, item) for item in value.value)
    return head + struct.pack("<IQ", value.item_kind, len(value.value)) + body


def _pad(size: int) -> int:
    return (ALIGNMENT - size % ALIGNMENT) % ALIGNMENT


def write_gguf(target: Path, metadata: dict[str, Value], tensors: Sequence[tuple[str, np.ndarray]]) -> None:
    """Write `tensors` (name, float32 or float16 array) with `metadata` to `target` atomically."""
    import numpy as np

    prepared: list[tuple[str, np.ndarray, int]] = []
    for name, data in tensors:
        if data.dtype == np.float16:
            prepared.append((name, np.ascontiguousarray(data), GGML_F16))
        else:
            prepared.append((name, np.ascontiguousarray(data, dtype=np.float32), GGML_F32))
    header = bytearray(b"GGUF")
    header += struct.pack("<IQQ", GGUF_VERSION, len(prepared), len(metadata))
    for key, value in metadata.items():
        header += _pack_string(key) + _pack_value(value)
    offset = 0
    for name, data, ggml_type in prepared:
        header += _pack_string(name) + struct.pack("<I", data.ndim)
        header += b"".join(struct.pack("<Q", dim) for dim in reversed(data.shape))
        header += struct.pack("<IQ", ggml_type, offset)
        offset += data.nbytes + _pad(data.nbytes)
    header += b"\0" * _pad(len(header))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            for _name, data, _type in prepared:
                _write_tensor(out, data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(part, 0o644)
        os.replace(part, target)
    except BaseException:
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass
        raise


def _write_tensor(out: BinaryIO, data: np.ndarray) -> None:
    out.write(data.tobytes())
    out.write(b"\0" * _pad(data.nbytes))
