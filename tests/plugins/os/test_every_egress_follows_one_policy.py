"""Invariant: every tool that sends data out obeys the one egress policy.

`os.web.search` (each provider request, each redirect hop) and MCP tool calls go through
the same decision as `os.http.request` and `os.web.fetch`: after a credential read in the
session, a send asks under `sensitive_egress` (an MCP tool's `readOnlyHint` or `pure_read`
trust changes nothing), an unlisted host asks under `http`, `allowlist-only` refuses it,
and a refusal or a denial sends nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from atomic_agent.api import ToolResult
from atomic_agent.plugins.mcp.mcp_records import ContentPart, ToolCallResult, ToolMeta
from atomic_agent.plugins.mcp.server_config import APPROVAL_GATED, PURE_READ, ServerConfig
from atomic_agent.plugins.mcp.tool_adapter import build_tool_spec
from atomic_agent.plugins.os.fs_approval.sensitive_taint import TAINT
from atomic_agent.plugins.os.http.http_config import HttpConfig
from atomic_agent.plugins.os.web.search_tool import build_search_tool
from atomic_agent.plugins.os.web.web_config import WebSearchConfig
from tests.plugins.os.loopback_vendor_server import LoopbackServer, Reply
from tests.plugins.os.test_web_search import ddg_page

SESSION = "sess-egress"


@attrs.define
class AskingContext:
    """A tool context whose approvals answer `answer` and are recorded by category."""

    working_dir: Path
    answer: bool = True
    session_id: str = SESSION
    asked: list[tuple[str, str]] = attrs.field(factory=list)

    async def ask_approval(self, category: str, summary: str, **_: Any) -> bool:
        self.asked.append((category, summary))
        return self.answer


@pytest.fixture(autouse=True)
def clean_taint() -> Iterator[None]:
    TAINT.clear()
    yield
    TAINT.clear()


@pytest.fixture()
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        srv.routes["/ddg"] = [Reply.html(ddg_page())]
        yield srv


def _search(server: LoopbackServer, tmp_path: Path, http: HttpConfig, url: str | None = None) -> Any:
    config = WebSearchConfig(duckduckgo_url=url or server.url("/ddg"), provider="duckduckgo", fallback=(),
                             persist_cache=False)
    return build_search_tool(config, tmp_path, environ={}, http=http)[0]


def _run(spec: Any, ctx: AskingContext, query: str = "python") -> ToolResult:
    return asyncio.run(spec.run({"query": query}, ctx))


LISTED = HttpConfig(approval_mode="allowlist", allowed_hosts=("127.0.0.1",))


@pytest.mark.parametrize("http", [HttpConfig(), LISTED, HttpConfig(approval_mode="allowlist",
                                                                   allowed_hosts=("*.example",))])
def test_a_search_after_a_credential_read_asks_and_a_denial_sends_nothing(server, tmp_path, http):
    TAINT.mark(SESSION, "~/.aws/credentials")
    ctx = AskingContext(tmp_path, answer=False)
    result = _run(_search(server, tmp_path, http), ctx)
    listed = http is LISTED
    if listed:  # an allowlisted provider host goes, as for os.http.request
        assert result.status == "ok" and ctx.asked == []
        return
    assert result.status == "error" and [c for c, _ in ctx.asked] == ["sensitive_egress"]
    assert ".aws/credentials" in ctx.asked[0][1] and "python" in ctx.asked[0][1]  # the person sees the query
    assert server.hits("/ddg") == []


def test_an_unlisted_provider_asks_under_http_and_allowlist_only_refuses_it(server, tmp_path):
    ctx = AskingContext(tmp_path, answer=False)
    denied = _run(_search(server, tmp_path, HttpConfig()), ctx)
    assert denied.status == "error" and [c for c, _ in ctx.asked] == ["http"] and server.hits("/ddg") == []
    strict = AskingContext(tmp_path)
    refused = _run(_search(server, tmp_path, HttpConfig(approval_mode="allowlist-only",
                                                        allowed_hosts=("search.example",))), strict)
    assert refused.status == "error" and strict.asked == [] and "allowlist-only" in refused.summary
    assert server.hits("/ddg") == []
    approved = AskingContext(tmp_path)
    spec = _search(server, tmp_path, HttpConfig())
    assert _run(spec, approved).status == "ok" and [c for c, _ in approved.asked] == ["http"]
    assert _run(spec, approved).status == "ok" and len(approved.asked) == 1  # a cached answer sends nothing, asks nothing


def test_a_redirect_off_a_listed_provider_host_asks_again(server, tmp_path):
    server.routes["/hop"] = [Reply(302, "", {"Location": server.url("/ddg", host="localhost")})]
    ctx = AskingContext(tmp_path, answer=False)
    result = _run(_search(server, tmp_path, LISTED, url=server.url("/hop")), ctx)
    assert result.status == "error" and [c for c, _ in ctx.asked] == ["http"] and "localhost" in ctx.asked[0][1]
    assert server.hits("/ddg") == []


class RecordingCaller:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def call_tool(self, server: str, tool: str, args: Any, timeout_s: float) -> ToolCallResult:
        self.calls.append((server, tool))
        return ToolCallResult((ContentPart(kind="text", text="ok"),))


@pytest.mark.parametrize(("trust", "hint"), [(APPROVAL_GATED, True), (APPROVAL_GATED, None), (APPROVAL_GATED, False),
                                             (PURE_READ, True), (PURE_READ, None)])
def test_an_mcp_call_after_a_credential_read_asks_whatever_its_hints(tmp_path, trust, hint):
    caller = RecordingCaller()
    spec = build_tool_spec(ServerConfig(name="notes", trust=trust),
                           ToolMeta("lookup", "Looks things up.", {"type": "object"}, read_only_hint=hint), caller,
                           4000, TAINT)
    TAINT.mark(SESSION, "~/.netrc")
    ctx = AskingContext(tmp_path, answer=False)
    result = asyncio.run(spec.run({"q": "secret stuff"}, ctx))
    assert result.status == "error" and [c for c, _ in ctx.asked] == ["sensitive_egress"] and caller.calls == []
    assert ".netrc" in ctx.asked[0][1]
    ctx.answer = True
    assert asyncio.run(spec.run({"q": "x"}, ctx)).status == "ok" and caller.calls == [("notes", "lookup")]


def test_an_mcp_call_in_an_untainted_session_keeps_its_old_gate(tmp_path):
    caller = RecordingCaller()
    exempt = build_tool_spec(ServerConfig(name="notes"), ToolMeta("read", "Reads.", {"type": "object"},
                                                                  read_only_hint=True), caller, 4000, TAINT)
    gated = build_tool_spec(ServerConfig(name="notes"), ToolMeta("write", "Writes.", {"type": "object"}), caller,
                            4000, TAINT)
    TAINT.mark("another-session", "~/.ssh/id_ed25519")  # another session's read does not taint this one
    ctx = AskingContext(tmp_path)
    assert asyncio.run(exempt.run({}, ctx)).status == "ok" and ctx.asked == []
    assert asyncio.run(gated.run({}, ctx)).status == "ok" and [c for c, _ in ctx.asked] == ["other"]


async def test_the_mcp_plugin_reads_credential_reads_from_the_os_plugins_service(tmp_path):
    """The two plugins meet through the `sensitive_reads` service, never an import."""
    from atomic_agent.api import runtime_for_test

    runtime = await runtime_for_test(tmp_path / "state", installed=True)
    try:
        assert runtime.service("mcp").sensitive is runtime.service("sensitive_reads") is TAINT
    finally:
        await runtime.close()
