"""The `vision` plugin: the `vision.describe` tool over the provider's optional image
capability (vision_contract.ImageDescriber), its config block and the `vision` service.

Registration reads only config (`vision.enabled`); whether the model can see is asked when
the tool runs. Hookimpls only; everything else is imported inside the hooks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, RuntimeView, ServiceSpec, ToolSpec

CONFIG_KEY = "vision"


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .vision_config import VisionConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=VisionConfig)]


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    # config only: the capability is checked at call time (invariant 4)
    if not runtime.config.block(CONFIG_KEY).enabled:
        return []
    from .describe_tool import make_describe

    return [make_describe(runtime)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    from .vision_contract import VISION_SERVICE
    from .vision_status import VisionService

    return [ServiceSpec(VISION_SERVICE, VisionService, summary="vision.describe's settings and the provider's "
                                                               "image capability, for capabilities endpoints")]
