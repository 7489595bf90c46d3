"""What the vision tests share: real image bytes, a workspace, a runtime over the fake server."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import atomic_agent.plugins.os as os_plugin
import atomic_agent.plugins.vision as vision_plugin
from atomic_agent.api import runtime_for_test
from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A valid PNG of `width` x `height` grey pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


# the start of a JFIF JPEG (SOI, APP0 "JFIF"); the sniff and the fake server read only the magic
JPEG_BYTES = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\x00" * 64 + b"\xff\xd9"
WEBP_BYTES = b"RIFF" + struct.pack("<I", 30) + b"WEBPVP8 " + b"\x00" * 22


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "shot.png").write_bytes(png_bytes())
    return ws


async def vision_runtime(tmp_path: Path, provider: Any, vision: dict[str, Any] | None = None) -> Any:
    """A started runtime with the os and vision plugins over `provider`."""
    config = {"vision": vision} if vision is not None else {}
    return await runtime_for_test(tmp_path / "state", plugins={"os": os_plugin, "vision": vision_plugin},
                                  config=config, provider=provider)


def llama(url: str) -> LlamaServerProvider:
    return LlamaServerProvider(url, "external", retries=0, timeout_s=10)
