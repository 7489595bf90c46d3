"""Whether the loaded model takes images, read from llama-server's /props.

llama-server has reported this in several ways over its releases; they are asked in this
order and the first that reports support wins (`source` names it, for diagnostics):

1. `modalities.vision` — the current surface (a `modalities` object with `vision`/`audio`);
2. `has_multimodal` — the flag of the releases before `modalities`;
3. `multimodal` — an older spelling of the same flag;
4. `mmproj` — the oldest: the projector path (at the root or in
   `default_generation_settings`), present only when one was loaded.

When none reports support the answer is (False, "none").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

SOURCES = ("modalities.vision", "has_multimodal", "multimodal", "mmproj")


@attrs.frozen
class VisionSupport:
    supported: bool
    source: str  # one of SOURCES, or "none"


def _flag(value: Any) -> bool:
    # a bool, or the non-empty path older servers put under `mmproj`
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and bool(value.strip())


def detect_vision(props: Mapping[str, Any]) -> VisionSupport:
    """Vision support from one /props answer."""
    modalities = props.get("modalities")
    if isinstance(modalities, Mapping) and modalities.get("vision") is True:
        return VisionSupport(True, SOURCES[0])
    if props.get("has_multimodal") is True:
        return VisionSupport(True, SOURCES[1])
    if props.get("multimodal") is True:
        return VisionSupport(True, SOURCES[2])
    settings = props.get("default_generation_settings")
    nested = settings.get("mmproj") if isinstance(settings, Mapping) else None
    if _flag(props.get("mmproj")) or _flag(nested):
        return VisionSupport(True, SOURCES[3])
    return VisionSupport(False, "none")
