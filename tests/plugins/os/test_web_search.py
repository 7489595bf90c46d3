"""`os.web.search`: providers that answer like the vendors, on a loopback server."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import attrs
import pytest

from atomic_agent.plugins.os.web.missing_key_warning import warn_missing_keys
from atomic_agent.plugins.os.web.search_tool import build_search_tool, search_tool_spec
from atomic_agent.plugins.os.web.web_config import WebConfig, WebSearchConfig
from tests.plugins.os.loopback_vendor_server import LoopbackServer, Received, Reply

DDG_PAGE = """<html><body><div class="results">
<div class="result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg={u1}&rut=x">Python <b>3.13</b> released</a></h2>
<a class="result__snippet" href="#">The <b>release</b> notes for 3.13.</a></div>
<div class="result"><h2><a class="result__a" href="{u2}">Second hit</a></h2>
<a class="result__snippet">Another snippet.</a></div></div></body></html>"""


def ddg_page() -> str:
    return DDG_PAGE.format(u1=quote("https://python.org/3.13", safe=""), u2="https://example.org/two")


def exa_answer(request: Received) -> Reply:
    payload = json.loads(request.body)
    query = payload["params"]["arguments"]["query"]
    text = json.dumps({"results": [{"title": f"Exa on {query}", "url": "https://exa.example/1", "text": "snippet"}]})
    message = {"jsonrpc": "2.0", "id": payload["id"], "result": {"content": [{"type": "text", "text": text}]}}
    return Reply(200, f"event: message\ndata: {json.dumps(message)}\n\n", {"Content-Type": "text/event-stream"})


@attrs.define
class Approving:
    """A tool context that approves every egress question (the policy itself is tested in
    test_every_egress_follows_one_policy)."""

    working_dir: Path
    session_id: str = "sess-search"

    async def ask_approval(self, category: str, summary: str, **_: Any) -> bool:
        return True


class Waits(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture()
def server():  # noqa: ANN201
    with LoopbackServer() as srv:
        yield srv


def config(server: LoopbackServer, **changes: Any) -> WebSearchConfig:
    base = WebSearchConfig(exa_url=server.url("/exa"), duckduckgo_url=server.url("/ddg"),
                           brave_url=server.url("/brave"), searxng_url=server.url("/searx"))
    return attrs.evolve(base, **changes)


def engine(search: WebSearchConfig, state_dir: Path | None, waits: Waits | None = None,
           environ: dict[str, str] | None = None):  # noqa: ANN201
    return build_search_tool(search, state_dir, environ={"EXA_API_KEY": "k"} if environ is None else environ,
                             sleep=waits if waits is not None else Waits())[1]


async def test_exa_over_its_mcp_endpoint(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = exa_answer
    result = await engine(config(server), tmp_path).run({"query": "llamas"})
    assert result.status == "ok" and result.details["provider"] == "exa"
    assert result.details["results"][0]["title"] == "Exa on llamas"
    sent = json.loads(server.hits("/exa")[0].body)
    assert sent["method"] == "tools/call" and sent["params"]["name"] == "web_search_exa"


async def test_exa_sends_the_key_when_set(server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXA_API_KEY", "exa-secret")
    server.routes["/exa"] = exa_answer
    await engine(config(server), tmp_path).run({"query": "q"})
    assert "exaApiKey=exa-secret" in server.hits("/exa")[0].path


async def test_duckduckgo_html_results_are_parsed(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/ddg"] = [Reply.html(ddg_page())]
    result = await engine(config(server, provider="duckduckgo", fallback=()), tmp_path).run({"query": "python"})
    results = result.details["results"]
    assert results[0] == {"title": "Python 3.13 released", "url": "https://python.org/3.13",
                          "snippet": "The release notes for 3.13."}
    assert results[1]["url"] == "https://example.org/two"


async def test_brave_with_its_key(server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key")
    server.routes["/brave"] = [Reply.json({"web": {"results": [
        {"title": "B <strong>one</strong>", "url": "https://b.example/1", "description": "d"}]}})]
    result = await engine(config(server, provider="brave", fallback=()), tmp_path).run({"query": "q"})
    assert result.details["results"][0]["title"] == "B one"
    assert server.hits("/brave")[0].headers["x-subscription-token"] == "brave-key"


async def test_searxng_json_api(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/searx/search"] = [Reply.json({"results": [{"title": "S", "url": "https://s.example", "content": "c"}]})]
    result = await engine(config(server, provider="searxng", fallback=()), tmp_path).run({"query": "q"})
    assert result.details["results"][0]["url"] == "https://s.example"
    assert "format=json" in server.hits("/searx/search")[0].path


async def test_a_429_is_retried_against_the_same_provider_first(server: LoopbackServer, tmp_path: Path) -> None:
    answers = [Reply(429, "slow"), Reply(429, "slow")]

    def exa(request: Received) -> Reply:
        return answers.pop(0) if answers else exa_answer(request)

    server.routes["/exa"] = exa
    server.routes["/ddg"] = [Reply.html(ddg_page())]
    waits = Waits()
    result = await engine(config(server), tmp_path, waits).run({"query": "q"})
    assert result.details["provider"] == "exa" and server.hits("/ddg") == []
    assert waits == [0.5, 1.0]  # 500 ms doubling


async def test_retry_after_wins_and_is_clamped(server: LoopbackServer, tmp_path: Path) -> None:
    answers = [Reply(429, "slow", {"Retry-After": "2"}), Reply(429, "slow", {"Retry-After": "86400"})]

    def exa(request: Received) -> Reply:
        return answers.pop(0) if answers else exa_answer(request)

    server.routes["/exa"] = exa
    waits = Waits()
    await engine(config(server), tmp_path, waits).run({"query": "q"})
    assert waits == [2.0, 10.0]


async def test_after_the_retries_the_chain_falls_through(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = [Reply(429, "slow")]
    server.routes["/ddg"] = [Reply.html(ddg_page())]
    result = await engine(config(server), tmp_path).run({"query": "q"})
    assert result.details["provider"] == "duckduckgo"
    assert len(server.hits("/exa")) == 3  # first try + 2 retries
    assert any("rate limited" in note for note in result.details["notes"])


async def test_a_5xx_falls_through_without_retrying(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = [Reply(502, "bad gateway")]
    server.routes["/ddg"] = [Reply.html(ddg_page())]
    waits = Waits()
    result = await engine(config(server), tmp_path, waits).run({"query": "q"})
    assert result.details["provider"] == "duckduckgo" and len(server.hits("/exa")) == 1 and waits == []


async def test_every_provider_failing_is_an_error_naming_each(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = [Reply(500, "x")]
    server.routes["/ddg"] = [Reply(202, "<html>anomaly detected</html>", {"Content-Type": "text/html"})]
    result = await engine(config(server), tmp_path).run({"query": "q"})
    assert result.status == "error" and "exa" in result.summary and "duckduckgo" in result.summary


async def test_a_cached_answer_is_served_without_a_request(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = exa_answer
    search = engine(config(server), tmp_path)
    await search.run({"query": "same"})
    again = await search.run({"query": "same"})
    assert again.details["cached"] and len(server.hits("/exa")) == 1


async def test_the_cache_survives_the_process(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = exa_answer
    await engine(config(server), tmp_path).run({"query": "persisted"})
    fresh = await engine(config(server), tmp_path).run({"query": "persisted"})
    assert fresh.details["cached"] and len(server.hits("/exa")) == 1
    assert (tmp_path / "web-search-cache.json").exists()


async def test_persist_cache_false_keeps_the_cache_in_memory(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = exa_answer
    await engine(config(server, persist_cache=False), tmp_path).run({"query": "q"})
    assert not (tmp_path / "web-search-cache.json").exists()
    await engine(config(server, persist_cache=False), tmp_path).run({"query": "q"})
    assert len(server.hits("/exa")) == 2


async def test_a_parked_provider_is_skipped_by_the_next_process(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = [Reply(503, "down")]
    server.routes["/ddg"] = [Reply.html(ddg_page())]
    await engine(config(server), tmp_path).run({"query": "one"})
    second = await engine(config(server), tmp_path).run({"query": "two"})
    assert second.details["provider"] == "duckduckgo" and len(server.hits("/exa")) == 1
    assert any("cooling down" in note for note in second.details["notes"])


class OneBlockRuntime:
    """A runtime view whose config holds only the `web` block."""

    def __init__(self, web: WebConfig, state_dir: Path) -> None:
        self.web = web
        self.state_dir = state_dir
        self.config = self  # the view is its own config: `runtime.config.block("web")`

    def block(self, key: str) -> WebConfig:
        return self.web if key == "web" else {}[key]


async def test_the_runtime_tool_builds_its_chain_on_the_first_search(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/exa"] = exa_answer
    runtime = OneBlockRuntime(WebConfig(search=config(server)), tmp_path)
    spec = search_tool_spec(runtime)
    assert spec == attrs.evolve(build_search_tool(config(server), tmp_path, environ={})[0], run=spec.run)
    first = await spec.run({"query": "llamas"}, Approving(tmp_path))
    again = await spec.run({"query": "llamas"}, Approving(tmp_path))
    assert first.status == "ok" and first.details["provider"] == "exa"
    assert again.details["cached"] and len(server.hits("/exa")) == 1  # one engine, kept after the first call


async def search_once(server: LoopbackServer, state_dir: Path) -> None:
    spec, _engine = build_search_tool(config(server), state_dir, environ={})
    await spec.run({"query": "q"}, Approving(state_dir))


async def test_a_missing_key_is_not_mentioned_until_a_search_runs(server: LoopbackServer, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    server.routes["/exa"] = exa_answer
    spec, _engine = build_search_tool(config(server), tmp_path, environ={})  # every runtime builds the tool
    assert "EXA_API_KEY" not in capsys.readouterr().err  # a first run that never searches is not greeted
    await spec.run({"query": "a"}, Approving(tmp_path))
    await spec.run({"query": "b"}, Approving(tmp_path))
    assert capsys.readouterr().err.count("EXA_API_KEY is empty") == 1


async def test_the_missing_key_warning_is_said_once_per_state_dir(server: LoopbackServer, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    server.routes["/exa"] = exa_answer
    await search_once(server, tmp_path)
    await search_once(server, tmp_path)  # the next `atomic-agent run`
    assert capsys.readouterr().err.count("EXA_API_KEY is empty") == 1
    await search_once(server, tmp_path / "other")
    assert capsys.readouterr().err.count("EXA_API_KEY is empty") == 1


async def test_searches_do_not_repeat_the_warning(server: LoopbackServer, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    server.routes["/exa"] = exa_answer
    search = engine(config(server), tmp_path, environ={})
    capsys.readouterr()
    await search.run({"query": "a"})
    await search.run({"query": "b"})
    assert "EXA_API_KEY" not in capsys.readouterr().err


def test_warnings_name_each_configured_provider_without_its_key() -> None:
    search = WebSearchConfig(provider="brave", fallback=("searxng", "exa"))
    stream = io.StringIO()
    messages = warn_missing_keys(search, {"EXA_API_KEY": "set"}, stream)
    assert len(messages) == 2 and "BRAVE_API_KEY" in stream.getvalue() and "searxngUrl" in stream.getvalue()


def test_an_unknown_provider_name_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="must be one of"):
        WebSearchConfig(provider="bing")
