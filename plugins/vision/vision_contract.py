"""The vision plugin's contract: the optional provider capability `ImageDescriber` (a provider
that can look at images) and the `vision` service other plugins read for capabilities.

A provider declares the capability by implementing both methods (structurally, as with
slot affinity: nothing to import or inherit). The text agent loop never calls them; only
the `vision.describe` tool does, on a request of its own (for llama-server: the OpenAI chat
endpoint without a slot id, so neither the main nor the reflection slot is touched).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

VISION_SERVICE = "vision"
# ProviderError.error_type a describer raises when the active model cannot see images
VISION_UNSUPPORTED = "vision_unsupported"


@runtime_checkable
class ImageDescriber(Protocol):
    """A provider that can describe images."""

    async def vision_support(self, refresh: bool = False) -> tuple[bool, str]:
        """(supported, source): whether the active model takes images now and which fact said so
        (llama-server: `modalities.vision`, `has_multimodal`, `multimodal`, `mmproj` or `none`;
        a hosted API: `config` or `catalog`). `refresh` re-reads the backend's facts first."""

    async def describe_images(self, prompt: str, images: Sequence[tuple[str, bytes]], *, max_images: int,
                              max_tokens: int = 512, assume_vision: bool = False) -> str:
        """The model's answer to `prompt` about `images` ((MIME type, bytes) pairs, in order).
        Raises ValueError for more than `max_images` images or none, and ProviderError (with
        `error_type` VISION_UNSUPPORTED) when the model cannot see images unless
        `assume_vision` (the operator said it can)."""


class VisionStatus(Protocol):
    """The `vision` service: what hosts report as the vision capability."""

    def status(self) -> dict[str, Any]:
        """{"enabled", "tool", "maxImagesPerCall", "maxImageBytes", "autoDetect", "provider": last
        known support or None, "source"} for capabilities endpoints."""
