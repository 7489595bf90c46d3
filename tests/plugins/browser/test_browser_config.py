"""The `browser` block: defaults, the Chromium path from config or ATOMIC_AGENT_CHROMIUM, and
`enabled: false` registering no browser tool."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import boot_for_test

from .browser_kit import browser_plugins


def test_the_chromium_path_comes_from_the_environment_when_config_has_none(tmp_path: Path) -> None:
    ctx = boot_for_test(tmp_path / "state", plugins=browser_plugins(), config={},
                        environ={"ATOMIC_AGENT_CHROMIUM": "/opt/chrome/chrome"})
    block = ctx.config.block("browser")
    assert block.chromium_path == "/opt/chrome/chrome" and block.navigation_timeout_s == 20 and block.enabled


async def test_disabled_registers_no_browser_tool(tmp_path: Path) -> None:
    from .browser_kit import browser_runtime

    rt = await browser_runtime(tmp_path / "state", config={"browser": {"enabled": False}})
    try:
        assert not [name for name in rt.registry.names() if name.startswith("browser.")]
    finally:
        await rt.close()
    rt = await browser_runtime(tmp_path / "state2", config={})
    try:
        assert len([name for name in rt.registry.names() if name.startswith("browser.")]) == 9
    finally:
        await rt.close()
