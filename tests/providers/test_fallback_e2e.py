"""Fallback invariant 8 end to end: a native-tools primary that starts answering 503 fails
over to the grammar link (the real llama-server fixture) and the turn completes.

The primary is the real openai-compatible plugin talking to a real loopback server that
answers 503; the fallback is the real llama-server plugin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from atomic_agent.agent.tool_calls import parse_tool_calls
from atomic_agent.api import CompletionRequest
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import fresh_plugin_host, registered_plugin
from tests.plugins.openai_compatible.vendor_server import Reply, vendor_server

pytestmark = pytest.mark.llama_server
UNAVAILABLE = Reply(503, {"error": {"message": "The server is overloaded", "type": "server_error"}})


@contextmanager
def failing_cloud_runtime(tmp_path: Path, llama_url: str) -> Iterator[tuple[Runtime, object]]:
    import atomic_agent.plugins.llama_server as llama_plugin
    import atomic_agent.plugins.openai_compatible as openai_plugin
    import atomic_agent.plugins.os as os_plugin

    with vendor_server(UNAVAILABLE) as cloud:
        state = tmp_path / "state"
        state.mkdir()
        (state / "config.json").write_text(json.dumps({"version": 2, "llm": {
            "providers": [{"id": "cloud", "kind": "openai-compatible", "baseUrl": cloud.url + "/v1", "model": "m",
                           "apiKeyEnv": "TEST_CLOUD_KEY", "retries": 0},
                          {"id": "local", "kind": "llama-server"}],
            "activeTextProvider": "cloud"}}))
        # coached for both links, so this test is about the transport switch alone; that a failover
        # renders each link in its own style is test_runtime_provider_wiring's (scripted links)
        env = {"TEST_CLOUD_KEY": "k", "ATOMIC_AGENT_LLAMA_URL": llama_url, "ATOMIC_AGENT_MAX_STEPS": "3",
               "ATOMIC_AGENT_SEED": "7", "ATOMIC_AGENT_PROMPT_STYLE": "coached"}
        host = fresh_plugin_host()
        with registered_plugin(host, llama_plugin, "llama_server"), \
                registered_plugin(host, openai_plugin, "openai_compatible"), \
                registered_plugin(host, os_plugin, "os"):
            yield Runtime(boot(state, environ=dict(env), host=host), environ=env), cloud


async def test_native_primary_fails_over_to_the_grammar_link_and_the_turn_completes(llama_server, tmp_path):
    events: list[dict] = []
    with failing_cloud_runtime(tmp_path, llama_server.base_url) as (rt, cloud):
        assert (await rt.prompt_plan()).grammar is None  # the primary speaks native tools
        # the demo's request: the one the starter model is measured to finish (a greeting is a coin
        # toss for it, and this test is about the failover, not the model's manners)
        (tmp_path / "notes.txt").write_text("milk\n")
        result = await rt.run_turn("list the files in this folder", working_dir=tmp_path, on_event=events.append)
        await rt.close()
    assert cloud.seen and cloud.seen[0].body.get("tools")  # the primary was asked with native tools
    assert result.status == "done", json.dumps([e for e in events if e["type"] in ("step_error", "loop_failed")])
    assert not any(e["type"] == "loop_failed" for e in events)
    switched = [e for e in events if e["type"] == "provider_switched"]
    assert [(e["direction"], e["from"], e["to"]) for e in switched] == [("away", "cloud", "local")]
    assert "503" in switched[0]["reason"]
    assert "notes.txt" in (result.reply or "")


async def test_unary_completion_through_the_seam_is_grammar_shaped_and_grammar_parsed(llama_server, tmp_path):
    with failing_cloud_runtime(tmp_path, llama_server.base_url) as (rt, _cloud):
        plan = await rt.prompt_plan()
        prefix = plan.profile.frame_stable_prefix(plan.stable_prefix_for(tmp_path))
        # a tail that asks for a short answer: the point is the transport's shape, not the model's prose
        tail = ('### conversation\nuser: Say hello.\n### respond\nReply now, for example:\n'
                '[{"tool": "reply", "args": {"text": "Hello!"}}]\nKeep it that short.\n')
        prompt = plan.profile.frame_prompt(plan.stable_prefix_for(tmp_path), tail)
        request = CompletionRequest(prompt=prompt, prefix_length=len(prefix), stream=False, n_predict=512,
                                    tools=tuple(rt.registry.specs()), seed=7)
        done = await rt.provider.complete(request)
        await rt.close()
    assert done.raw["servedBy"] == "local" and done.raw["servedTransport"] == "grammar"
    assert done.tool_calls is None
    batch = parse_tool_calls(done.content, plan.profile, prefilled_open=False)
    assert batch.calls and all(c.tool in rt.registry.names() for c in batch.calls)
