"""The completion seam: per-link request shape, served-transport stamp, primary's facts."""

from __future__ import annotations

from atomic_agent.agent.step_executor import batch_from_native_calls
from atomic_agent.api import Completion, CompletionRequest, ProviderError, ResourceClass, ToolSpec, slot_affinity
from atomic_agent.providers.fallback_provider import FallbackTextProvider, RequestShaper
from atomic_agent.providers.llm_config import structure_llm_block
from atomic_agent.providers.provider_registry import ProviderRegistry
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.providers.provider_kit import Built, scripted_kind


async def _noop(args, ctx):  # pragma: no cover
    raise AssertionError


SPECS = (ToolSpec("reply", "Answer.", {"type": "object"}, ResourceClass.TERMINAL, _noop),)


def seam(llm: dict, built: Built, **makers) -> FallbackTextProvider:
    kinds = [scripted_kind("llama-server", "grammar", built, make=makers.get("llama")),
             scripted_kind("cloudish", "native_tools", built, make=makers.get("cloud"))]
    registry = ProviderRegistry({k.name: k for k in kinds}, structure_llm_block(llm), runtime=None)
    return FallbackTextProvider(registry, RequestShaper(lambda: SPECS, lambda profile: "root ::= \"[\"",
                                                        makers.get("profile_of")))


NATIVE_FIRST = {"providers": [{"id": "c", "kind": "cloudish"}, {"id": "local", "kind": "llama-server"}]}
GRAMMAR_FIRST = {"providers": [{"id": "local", "kind": "llama-server"}, {"id": "c", "kind": "cloudish"}],
                 "fallback": {"chain": ["local", "c"]}}


async def test_cross_transport_fallover_sends_the_grammar_to_the_grammar_link_and_parses_its_answer():
    built = Built()
    down = ScriptedProvider(transport="native_tools", script=[ProviderError("down", status=503)])
    s = seam(NATIVE_FIRST, built, cloud=lambda e: down)
    native_request = CompletionRequest(prompt="p", grammar=None, tools=SPECS, stream=False)
    done = await s.complete(native_request)
    sent = built.last("local").requests[0]
    assert sent.grammar == 'root ::= "["' and sent.tools == ()
    assert done.tool_calls is None and done.raw["servedTransport"] == "grammar" and done.raw["servedBy"] == "local"


async def test_a_grammar_link_behind_a_native_primary_gets_the_prompt_framed_for_its_own_model():
    from atomic_agent.llm.model_profile import PLAIN_CHATML_PROFILE, PLAIN_TEXT_PROFILE

    async def chatml(link):
        return PLAIN_CHATML_PROFILE

    built = Built()
    down = ScriptedProvider(transport="native_tools", script=[ProviderError("down", status=503)], slot=-1)
    s = seam(NATIVE_FIRST, built, cloud=lambda e: down, profile_of=chatml)
    stable, tail = "### system\nbe brief\n", "### conversation\nuser: hi\n"
    plain = CompletionRequest(prompt=PLAIN_TEXT_PROFILE.frame_prompt(stable, tail), tools=SPECS, stream=False,
                              prefix_length=len(PLAIN_TEXT_PROFILE.frame_stable_prefix(stable)), parts=(stable, tail))
    await s.for_session("s1").complete(plain)
    sent = built.last("local").requests[0]
    assert sent.prompt == PLAIN_CHATML_PROFILE.frame_prompt(stable, tail) != plain.prompt
    assert sent.prompt.startswith("<|im_start|>system") and sent.prefix_length == len(
        PLAIN_CHATML_PROFILE.frame_stable_prefix(stable))
    assert sent.slot_id == 0  # the session's slot on the local server, not "any slot"
    assert down.requests[0].prompt == plain.prompt  # the primary got its own framing


async def test_a_native_link_behind_a_grammar_primary_gets_the_tool_specs():
    built = Built()
    down = ScriptedProvider(transport="grammar", script=[ProviderError("down", status=500)])
    s = seam(GRAMMAR_FIRST, built, llama=lambda e: down)
    done = await s.complete(CompletionRequest(prompt="p", grammar="g", stream=False))
    assert built.last("c").requests[0].tools == SPECS
    assert done.tool_calls == () and done.raw["servedTransport"] == "native_tools"
    assert batch_from_native_calls(done).calls[0].tool == "reply"  # prose -> the guarded reply path


async def test_a_native_link_answer_is_never_parsed_as_grammar_and_vice_versa():
    from atomic_agent.providers.fallback_provider import stamp_served

    native = stamp_served(Completion(content="hi"), "c", "native_tools")
    grammar = stamp_served(Completion(content=calls(("reply", {"text": "x"})), tool_calls=()), "l", "grammar")
    assert native.tool_calls == () and grammar.tool_calls is None


async def test_facts_and_extras_are_the_primarys():
    built = Built()
    s = seam(NATIVE_FIRST, built)
    primary = s.primary
    assert s.capabilities.transport == "native_tools" and s.mode == primary.mode
    assert await s.context_window() == primary.n_ctx and slot_affinity(s).slot_for("x") == primary.slot
    assert s.max_tokens == primary.max_tokens and s.model_alias == primary.model_alias  # the listed extras
    assert not hasattr(s, "requests")  # nothing unlisted is looked up on the primary


async def test_a_link_that_cannot_be_built_is_unavailable_and_skipped():
    built = Built()
    down = ScriptedProvider(transport="native_tools", script=[ProviderError("down", status=503)])

    def broken(entry):
        raise ValueError("needs an API key in $X")

    s = seam({"providers": [{"id": "c", "kind": "cloudish"}, {"id": "b", "kind": "llama-server"},
                            {"id": "local", "kind": "llama-server"}], "fallback": {"chain": ["c", "b", "local"]}},
             built, cloud=lambda e: down,
             llama=lambda e: broken(e) if e["id"] == "b" else ScriptedProvider(transport="grammar"))
    done = await s.complete(CompletionRequest(prompt="p", stream=False))
    assert done.raw["servedBy"] == "local"


async def test_session_bound_views_use_their_own_partition_and_sinks():
    built = Built()
    script = [ProviderError("down", status=503)]
    s = seam(NATIVE_FIRST, built, cloud=lambda e: ScriptedProvider(transport="native_tools", script=script))
    notices, usage = [], []
    bound = s.for_session("s1", notices.append, lambda pid, c: usage.append(pid))
    await bound.complete(CompletionRequest(prompt="p", stream=False))
    assert s.chain.override("s1") == "local" and s.chain.override(None) is None
    assert [n.to_id for n in notices] == ["local"] and usage == ["local"]


async def test_hot_swap_re_primes_the_chain():
    built = Built()
    s = seam(NATIVE_FIRST, built)
    await s.registry.set_active("local")
    assert s.chain.links == ("local",)  # chain defaults to [active]; local is already in it
    assert s.capabilities.transport == "grammar"


def test_the_seam_and_its_session_view_forward_nothing_implicitly():
    """Each wrapper spells out its members: no `__getattr__` passes unknown names through."""
    from atomic_agent.api import TextProvider
    from atomic_agent.providers.fallback_provider import SessionProvider

    for wrapper in (FallbackTextProvider, SessionProvider):
        assert not any("__getattr__" in vars(cls) for cls in wrapper.__mro__ if cls is not object), wrapper
        members = {n for n in vars(TextProvider) if not n.startswith("_")} | set(TextProvider.__annotations__)
        assert members - set(dir(wrapper)) == set(), wrapper


async def test_the_primarys_extras_are_read_through_and_absent_when_the_primary_lacks_them():
    built = Built()

    class Hosted(ScriptedProvider):  # no max_tokens, no slots, no refresh, no temperature
        reflection_slot = None  # not implemented: no SlotAffinity

        def __getattribute__(self, name):
            if name in ("max_tokens", "reflection_slot", "refresh", "temperature", "model"):
                raise AttributeError(name)
            return super().__getattribute__(name)

    local = ScriptedProvider(transport="grammar")
    local.temperature = 0.4
    refreshed = []

    async def refresh():
        refreshed.append(True)

    local.refresh = refresh
    local.reflection_slot = lambda: 1
    s = seam(GRAMMAR_FIRST, built, llama=lambda e: local)
    assert (s.max_tokens, s.temperature, s.model_alias, slot_affinity(s).reflection_slot()) == (256, 0.4, "scripted", 1)
    await s.refresh()
    assert refreshed == [True]
    assert getattr(s, "model", None) is None  # the scripted primary names no configured model

    hosted = seam(NATIVE_FIRST, Built(), cloud=lambda e: Hosted(transport="native_tools"))
    assert [getattr(hosted, n, None) for n in ("max_tokens", "refresh", "temperature")] == [None, None, None]
    assert slot_affinity(hosted) is None  # a primary without slots: no slot capability through the seam
    with_session = hosted.for_session("s1")
    assert not hasattr(with_session, "max_tokens")  # the session view lists only TextProvider's members
    assert slot_affinity(with_session) is None
    assert slot_affinity(s.for_session("s1")).reflection_slot() == 1  # the session view reads through too


async def test_a_free_text_request_never_gets_a_tool_call_grammar_or_tools_on_any_link():
    # a compaction summary or an MCP sampling call: no grammar, no tools, its own slot choice
    built = Built()
    free = CompletionRequest(prompt="summarise", grammar=None, stream=False, slot_id=-1)
    grammar_first = seam(GRAMMAR_FIRST, built)
    await grammar_first.for_session("s1").complete(free)
    sent = built.last("local").requests[0]
    assert sent.grammar is None and sent.tools == () and sent.slot_id == -1

    built = Built()
    down = ScriptedProvider(transport="grammar", script=[ProviderError("down", status=500)])
    await seam(GRAMMAR_FIRST, built, llama=lambda e: down).complete(free)
    assert built.last("c").requests[0].tools == ()  # the native fallback is not offered tools either

    built = Built()
    down = ScriptedProvider(transport="native_tools", script=[ProviderError("down", status=503)], slot=-1)
    await seam(NATIVE_FIRST, built, cloud=lambda e: down).for_session("s1").complete(free)
    sent = built.last("local").requests[0]
    assert sent.grammar is None and sent.slot_id == -1
