"""The `browser` plugin: the browser.* tools on the system Chromium (Playwright drives it),
and the page snapshot each session last saw as its `### world` (a "world" prompt section).

One browser per process, started on the first call (browser_host); its service `browser`
(browser_contract.BrowserWorld) is what the world section reads. Hookimpls only; Playwright
and everything else load when the hooks run or the first browser call comes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, MemoryPhase, RuntimeView, ServiceSpec, ToolSpec

    from .browser_contract import BrowserWorld
    from .browser_host import BrowserHost

WORLD_SOURCE = "the browser's open page"


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .browser_config import BROWSER_BLOCK, BrowserConfig

    return [ConfigBlock(key=BROWSER_BLOCK, cls=BrowserConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    from .browser_contract import BROWSER_SERVICE

    def build(runtime: RuntimeView) -> BrowserWorld:
        from .browser_host import BrowserHost

        return BrowserHost(runtime)

    return [ServiceSpec(BROWSER_SERVICE, build, summary="the process's browser and each session's page snapshot "
                                                        "(world_text(session_id))")]


def _host(runtime: RuntimeView) -> BrowserHost:
    from .browser_contract import BROWSER_SERVICE

    host: BrowserHost = runtime.service(BROWSER_SERVICE)
    return host


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    from .browser_config import browser_config

    if not browser_config(runtime).enabled:
        return []
    from .browser_tools import tool_specs

    return tool_specs(runtime, lambda: _host(runtime))


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    from atomic_agent.api import MemoryPhase, PromptSection

    def sections(session_id: str, _text: str) -> list[PromptSection]:
        text = _host(runtime).world_text(session_id)
        # a session that never used the browser keeps the tail it had without this plugin
        return [] if text is None else [PromptSection("world", text, slot="world", source=WORLD_SOURCE)]

    return [MemoryPhase(name="browser_world", order=900, sections=sections)]


@hookimpl
def runtime_stopping(runtime: RuntimeView) -> Awaitable[None] | None:
    from .browser_contract import BROWSER_SERVICE

    host = runtime.service(BROWSER_SERVICE, None)
    return host.close() if host is not None else None
