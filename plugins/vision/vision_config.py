"""The `vision` config block."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field

DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024


@attrs.frozen
class VisionConfig:
    """`vision.describe`: on/off, whether the provider's detected support gates it, the caps.

    `enabled` false registers no tool (the prompt does not offer one) and `llama start` loads
    no projector. `auto_detect` false trusts the operator: the call goes out even when the
    backend does not report vision (a custom server that does not say). The caps bound one
    call: images per call (tool and provider both refuse more) and bytes per image (checked
    before the file is read)."""

    enabled: bool = value_field(True, env="ATOMIC_AGENT_VISION")
    auto_detect: bool = value_field(True)
    max_images_per_call: int = int_field(4, 1, 16)
    max_image_bytes: int = int_field(DEFAULT_MAX_IMAGE_BYTES, 1024, 64 * 1024 * 1024)
    max_tokens: int = int_field(512, 16, 8192)  # the description's length budget
