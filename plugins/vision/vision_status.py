"""The `vision` service (vision_contract.VisionStatus): what serve and the sidecar report."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class VisionService:
    runtime: Any

    def status(self) -> dict[str, Any]:
        from .describe_tool import CONFIG_KEY, NAME
        from .image_describer import image_describer

        cfg = self.runtime.config.block(CONFIG_KEY)
        describer = image_describer(self.runtime.provider)
        caps = getattr(self.runtime.provider, "capabilities", None)
        return {"enabled": cfg.enabled, "tool": NAME if cfg.enabled else None, "autoDetect": cfg.auto_detect,
                "maxImagesPerCall": cfg.max_images_per_call, "maxImageBytes": cfg.max_image_bytes,
                # the provider's last known answer (llama-server: from its last /props read)
                "providerCanDescribe": describer is not None,
                "providerReportsVision": bool(getattr(caps, "vision", False))}
