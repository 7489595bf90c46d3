"""serve's /api/capabilities and the sidecar's get_capabilities report vision: null without
the plugin, its settings and the provider's capability with it (checked against the schema)."""

from __future__ import annotations

from pathlib import Path

import httpx

import atomic_agent.plugins.vision as vision_plugin
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import ServeHarness
from tests.plugins.sidecar.sidecar_harness import SidecarHarness

EXPECTED = {"enabled": True, "tool": "vision.describe", "autoDetect": True, "maxImagesPerCall": 4,
            "maxImageBytes": 10 * 1024 * 1024, "providerCanDescribe": False, "providerReportsVision": False}


async def test_the_sidecar_reports_vision_and_its_schema_accepts_it(tmp_path: Path) -> None:
    with_plugin = SidecarHarness(tmp_path / "a", ScriptedProvider(), extra=[(vision_plugin, "vision")])
    without = SidecarHarness(tmp_path / "b", ScriptedProvider())
    try:
        assert (await with_plugin.ok("get_capabilities"))["vision"] == EXPECTED
        assert (await without.ok("get_capabilities"))["vision"] is None
        assert not with_plugin.sink.problems and not without.sink.problems  # the schema checked each answer
    finally:
        await with_plugin.server.shutdown()
        await without.server.shutdown()


def test_serve_reports_vision(tmp_path: Path) -> None:
    serve = ServeHarness(tmp_path, runtime_factory=lambda ask: make_runtime(
        tmp_path, ScriptedProvider(), ask=ask, extra=[(vision_plugin, "vision")]))
    try:
        caps = httpx.get(f"{serve.base_url}/api/capabilities").json()
    finally:
        serve.stop()
    assert caps["vision"] == EXPECTED
