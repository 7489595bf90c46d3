"""The runtime's provider seam: registry + fallback chain behind `runtime.provider`."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from atomic_agent.api import Completion, ProviderError
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls

from .provider_kit import Built, booted, scripted_kind


def kinds(built: Built, **makers):
    return [scripted_kind("llama-server", "grammar", built, make=makers.get("llama")),
            scripted_kind("cloudish", "native_tools", built, make=makers.get("cloud"))]


def trace(state: Path, session_id: str) -> list[dict]:
    return [json.loads(line) for line in (state / "traces" / f"{session_id}.ndjson").read_text().splitlines()]


async def test_local_only_install_sends_the_loops_requests_unchanged(tmp_path):
    """Guide invariant 1: with no cloud provider the grammar path is the reference behaviour."""
    built = Built()
    with booted(tmp_path / "a", None, kinds(built)) as ctx:
        rt = Runtime(ctx)
        result = await rt.run_turn("hi", working_dir=tmp_path)
        await rt.close()
    via_registry = built.last("local").requests
    reference = ScriptedProvider(transport="grammar", default=calls(("reply", {"text": "from local"})), slot=0)
    with booted(tmp_path / "b", None, kinds(Built())) as ctx:
        rt = Runtime(ctx, provider=reference)
        await rt.run_turn("hi", working_dir=tmp_path)
        await rt.close()
    assert result.status == "done" and result.reply == "from local"
    assert len(via_registry) == len(reference.requests) == 1
    sent, ref = via_registry[0], reference.requests[0]
    assert sent.grammar and sent.grammar == ref.grammar and sent.slot_id == ref.slot_id == 0
    assert attrs.evolve(sent, prompt="") == attrs.evolve(ref, prompt="")
    assert sent.tools == ()


async def test_native_active_provider_gets_tool_specs_and_no_grammar(tmp_path):
    built = Built()
    llm = {"providers": [{"id": "c", "kind": "cloudish"}]}
    with booted(tmp_path / "s", llm, kinds(built)) as ctx:
        rt = Runtime(ctx)
        result = await rt.run_turn("hi", working_dir=tmp_path)
        await rt.close()
    sent = built.last("c").requests[0]
    assert result.status == "done" and result.reply == "from c"
    assert sent.grammar is None and {s.name for s in sent.tools} >= {"reply", "finish"}
    assert sent.prefix_length and sent.slot_id == -1


async def test_set_active_provider_hot_swaps_without_restart(tmp_path):
    built = Built()
    llm = {"providers": [{"id": "local", "kind": "llama-server"}, {"id": "c", "kind": "cloudish"}]}
    with booted(tmp_path / "s", llm, kinds(built)) as ctx:
        rt = Runtime(ctx)
        first = await rt.run_turn("one", working_dir=tmp_path)
        old = built.last("local")
        await rt.set_active_provider("c")
        second = await rt.run_turn("two", session_id=first.session_id)
        await rt.close()
    assert first.reply == "from local" and second.reply == "from c"
    assert old.closed
    assert built.last("c").requests[0].grammar is None  # re-planned for the native provider


async def test_failover_emits_one_switch_event_and_the_next_turn_stays_put(tmp_path):
    built = Built()
    failing = ScriptedProvider(transport="native_tools", script=[ProviderError("busy", status=503, url="http://c")])
    llm = {"providers": [{"id": "c", "kind": "cloudish"}, {"id": "local", "kind": "llama-server"}]}
    events: list[dict] = []
    with booted(tmp_path / "s", llm, kinds(built, cloud=lambda e: failing)) as ctx:
        rt = Runtime(ctx)
        first = await rt.run_turn("one", working_dir=tmp_path, on_event=events.append)
        second = await rt.run_turn("two", session_id=first.session_id, on_event=events.append)
        await rt.close()
    switched = [e for e in events if e["type"] == "provider_switched"]
    assert first.status == second.status == "done"
    assert first.reply == second.reply == "from local"
    assert len(switched) == 1
    assert switched[0]["direction"] == "away" and switched[0]["from"] == "c" and switched[0]["to"] == "local"
    assert len(failing.requests) == 1  # sticky: the dead primary is not retried on the next turn
    recorded = [e for e in trace(tmp_path / "s", first.session_id) if e["type"] == "provider_switched"]
    assert len(recorded) == 1 and recorded[0]["toProvider"] == "local"


async def test_usage_of_each_completion_is_traced_per_turn(tmp_path):
    built = Built()
    answer = Completion(content="priced", usage={"model": "m", "promptTokens": 7, "completionTokens": 2,
                                                  "cachedTokens": 0, "costUsd": 0.001})
    cloud = ScriptedProvider(transport="native_tools", script=[answer])
    with booted(tmp_path / "s", {"providers": [{"id": "c", "kind": "cloudish"}]},
                kinds(built, cloud=lambda e: cloud)) as ctx:
        rt = Runtime(ctx)
        result = await rt.run_turn("hi", working_dir=tmp_path)
        await rt.close()
    usage = [e for e in trace(tmp_path / "s", result.session_id) if e["type"] == "llm_usage"]
    assert len(usage) == 1
    assert usage[0]["provider"] == "c" and usage[0]["costUsd"] == 0.001 and usage[0]["turnIndex"] == result.turn_index


async def test_failover_renders_the_prompt_in_the_fallback_links_own_style(tmp_path):
    """A cloud primary resolves `prompt.style: auto` to full; its small local fallback needs the
    coached prompt, and gets it, rendered for the same step (and framed for its own model)."""
    from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities

    built = Built()
    cloud = ScriptedProvider(transport="native_tools", model_alias="big-cloud-model",
                             script=[ProviderError("busy", status=503, url="http://c")], slot=-1)
    local = ScriptedProvider(transport="grammar", model_alias="SmolLM2-135M-Instruct",
                             default=calls(("reply", {"text": "from local"})))
    llm = {"providers": [{"id": "c", "kind": "cloudish"}, {"id": "local", "kind": "llama-server"}]}
    with booted(tmp_path / "s", llm, kinds(built, cloud=lambda e: cloud, llama=lambda e: local)) as ctx:
        rt = Runtime(ctx)
        plan = await rt.prompt_plan()
        result = await rt.run_turn("hi there", working_dir=tmp_path)
        coached = build_stable_prefix(plan.env, rt.registry, default_capabilities(tmp_path),
                                      max_calls=rt.config.agent.max_parallel_tool_calls, style="coached")
        await rt.close()
    assert plan.style.name == "full" and result.status == "done" and result.reply == "from local"
    asked, served = cloud.requests[0], local.requests[0]
    assert asked.style == "full" and served.style == "coached"
    assert served.parts is not None and asked.parts is not None
    assert served.parts[0] == coached != asked.parts[0]
    assert served.parts[1] != asked.parts[1] and "hi there" in served.parts[1]
    # framed for the local model's own chat markers, with the grammar for its calls
    assert served.prompt.startswith("<|im_start|>system\n" + coached) and served.grammar


async def test_failover_keeps_the_prompt_when_the_link_wants_the_same_style(tmp_path):
    built = Built()
    cloud = ScriptedProvider(transport="native_tools", script=[ProviderError("busy", status=503)], slot=-1)
    local = ScriptedProvider(transport="grammar", model_alias="another-big-model",
                             default=calls(("reply", {"text": "from local"})))
    llm = {"providers": [{"id": "c", "kind": "cloudish"}, {"id": "local", "kind": "llama-server"}]}
    with booted(tmp_path / "s", llm, kinds(built, cloud=lambda e: cloud, llama=lambda e: local)) as ctx:
        rt = Runtime(ctx)
        await rt.run_turn("hi", working_dir=tmp_path)
        await rt.close()
    assert cloud.requests[0].style == local.requests[0].style == "full"
    assert cloud.requests[0].parts == local.requests[0].parts
