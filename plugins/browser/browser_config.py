"""The `browser` config block: which Chromium to drive and how long to wait for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from atomic_agent.api import int_field, value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

BROWSER_BLOCK = "browser"


@attrs.frozen
class BrowserConfig:
    """`enabled`: register the browser.* tools. `chromiumPath`: the Chromium executable
    (empty: the system one, /usr/bin/chromium and the usual other names on PATH); Playwright's
    own browser download is never used. `navigationTimeoutS`: how long browser.open and
    browser.back wait for the page's load event. `actionTimeoutS`: how long a click, typing or
    a choice waits for its element. `sandbox`: run Chromium's own sandbox around its renderers
    (Chromium refuses it as root, so a process running as root runs without it; switch it off
    where user namespaces are disabled and Chromium cannot start with it). Pop-up windows are
    closed as they open (a call reports how many)."""

    enabled: bool = value_field(True)
    chromium_path: str = value_field("", env="ATOMIC_AGENT_CHROMIUM")
    navigation_timeout_s: int = int_field(20, 1, 300)
    action_timeout_s: int = int_field(5, 1, 120)
    sandbox: bool = value_field(True)


def browser_config(runtime: RuntimeView) -> BrowserConfig:
    """The configured block, or defaults when it is not registered (a bare test runtime)."""
    try:
        block = runtime.config.block(BROWSER_BLOCK)
    except (KeyError, AttributeError):
        return BrowserConfig()
    return block if isinstance(block, BrowserConfig) else BrowserConfig()
