"""Session routes, FIFO on one session, a client leaving mid-stream, the bind policy, and
one request against the real llama-server."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import openai
import pytest
from typer.testing import CliRunner

import atomic_agent.plugins.serve as http_plugin
from atomic_agent.plugins.serve.bind_policy import bind_problem, is_loopback
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import JSON, WAIT_S, ServeHarness, ThreadGatedProvider

HI = [{"role": "user", "content": "hello"}]


def test_session_routes_create_list_show_and_delete(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    serve = ServeHarness(tmp_path, ScriptedProvider())
    try:
        base = serve.base_url
        created = httpx.post(f"{base}/api/sessions", json={"workingDir": str(work), "title": "demo"})
        assert created.status_code == 201
        sid = created.json()["id"]
        httpx.post(f"{base}/v1/chat/completions", json={"model": "m", "messages": HI},
                   headers={"X-Atomic-Session": sid}, timeout=WAIT_S)
        listed = httpx.get(f"{base}/api/sessions").json()["data"]
        assert [(s["id"], s["title"], s["turns"], s["busy"]) for s in listed] == [(sid, "demo", 1, False)]
        shown = httpx.get(f"{base}/api/sessions/{sid}").json()
        assert shown["workingDir"] == str(work.resolve()) and shown["turnSummaries"][0]["state"] == "done"
        assert [e["kind"] for e in shown["entries"]][:2] == ["turn_started", "user"]
        assert httpx.delete(f"{base}/api/sessions/{sid}").json()["deleted"] is True
        gone = httpx.get(f"{base}/api/sessions/{sid}")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "session_not_found"
        assert httpx.delete(f"{base}/api/sessions/{sid}").status_code == 404
        bad_dir = httpx.post(f"{base}/api/sessions", json={"workingDir": str(tmp_path / "missing")})
        assert bad_dir.status_code == 400
        assert httpx.get(f"{base}/api/sessions", params={"limit": "lots"}).status_code == 400
        no_route = httpx.get(f"{base}/api/nothing-here")
        assert no_route.status_code == 404 and no_route.json()["error"]["code"] == "not_found"
        wrong_method = httpx.put(f"{base}/v1/models")
        assert wrong_method.status_code == 405 and "error" in wrong_method.json()
        huge = httpx.post(f"{base}/v1/chat/completions", content=b"x" * (5 * 1024 * 1024), timeout=WAIT_S,
                          headers=JSON)
        assert huge.status_code == 413 and huge.json()["error"]["code"] == "body_too_large"
        chunked = httpx.post(f"{base}/v1/chat/completions", content=iter([b"x" * (1 << 20)] * 5),
                             timeout=WAIT_S, headers=JSON)
        assert chunked.status_code == 413
        not_json = httpx.post(f"{base}/v1/chat/completions", content=b"{nope", timeout=WAIT_S, headers=JSON)
        assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "invalid_json"
    finally:
        serve.stop()


def test_deleting_a_session_with_a_turn_in_flight_is_refused(tmp_path: Path):
    provider = ThreadGatedProvider([calls(("reply", {"text": "ok"}))], gate_at=0)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid = httpx.post(f"{serve.base_url}/api/sessions", json={}).json()["id"]
        out: dict = {}
        thread = threading.Thread(target=lambda: out.setdefault("r", httpx.post(
            f"{serve.base_url}/v1/chat/completions", json={"model": "m", "messages": HI},
            headers={"X-Atomic-Session": sid}, timeout=WAIT_S)))
        thread.start()
        assert provider.entered.wait(WAIT_S)
        busy = httpx.delete(f"{serve.base_url}/api/sessions/{sid}")
        assert busy.status_code == 409 and busy.json()["error"]["code"] == "session_busy"
        provider.release.set()
        thread.join(WAIT_S)
        assert out["r"].status_code == 200
    finally:
        provider.release.set()
        serve.stop()


def test_concurrent_requests_on_one_session_queue_fifo(tmp_path: Path):
    provider = ThreadGatedProvider([calls(("reply", {"text": "first"})), calls(("reply", {"text": "second"}))],
                                   gate_at=0)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid = httpx.post(f"{serve.base_url}/api/sessions", json={}).json()["id"]
        results: dict[str, str] = {}

        def ask(name: str, text: str) -> None:
            response = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                                  json={"model": "m", "messages": [{"role": "user", "content": text}]},
                                  headers={"X-Atomic-Session": sid})
            results[name] = response.json()["choices"][0]["message"]["content"]

        first = threading.Thread(target=ask, args=("a", "one"))
        first.start()
        assert provider.entered.wait(WAIT_S)
        second = threading.Thread(target=ask, args=("b", "two"))
        second.start()
        position = 0
        for _ in range(int(WAIT_S / 0.01)):  # until the second turn is queued behind the first
            # (its admission is acknowledged, and queued, only once the shared fsync covers it)
            position = serve.call(lambda: serve.runtime.turns.queue_position(sid))
            if position == 2:
                break
            threading.Event().wait(0.01)
        assert position == 2
        provider.release.set()
        first.join(WAIT_S)
        second.join(WAIT_S)
        assert results == {"a": "first", "b": "second"}
        users = [e.text for e in serve.runtime.sessions.load(sid).entries if e.kind == "user"]
        assert users == ["one", "two"]
    finally:
        provider.release.set()
        serve.stop()


def test_a_client_leaving_mid_stream_does_not_stop_the_turn(tmp_path: Path):
    provider = ThreadGatedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "finished anyway"}))],
                                   gate_at=1)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid = httpx.post(f"{serve.base_url}/api/sessions", json={}).json()["id"]
        with httpx.stream("POST", f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                          json={"model": "m", "messages": HI, "stream": True},
                          headers={"X-Atomic-Session": sid}) as response:
            first = next(response.iter_lines())
            assert first.startswith("data: ")
        assert provider.entered.wait(WAIT_S)  # the turn is at its second inference, nobody is listening
        provider.release.set()
        serve.wait_turns()
        entries = serve.runtime.sessions.load(sid).entries
        assert [e.text for e in entries if e.kind == "assistant_reply"] == ["finished anyway"]
        assert (entries[-1].kind, entries[-1].status) == ("turn_finished", "done")
    finally:
        provider.release.set()
        serve.stop()


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                                ("[::1]", True), ("127.8.9.10", True), ("0.0.0.0", False),
                                                ("192.168.1.5", False), ("example.org", False)])
def test_loopback_detection(host: str, loopback: bool):
    assert is_loopback(host) is loopback


def test_a_non_loopback_bind_needs_an_api_key():
    assert bind_problem("127.0.0.1", None, "KEY") is None
    assert bind_problem("0.0.0.0", "secret", "KEY") is None
    problem = bind_problem("0.0.0.0", None, "ATOMIC_AGENT_API_KEY")
    assert problem and "ATOMIC_AGENT_API_KEY" in problem and "127.0.0.1" in problem


def test_serve_command_refuses_a_public_bind_without_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from atomic_agent.cli.cli_state import CliState
    from atomic_agent.cli.main import build_app
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.testing.runtime_kit import fresh_plugin_host

    monkeypatch.delenv("ATOMIC_AGENT_API_KEY", raising=False)
    host = fresh_plugin_host()
    host.register(http_plugin, "http")
    ctx = boot(tmp_path / "state", environ={}, host=host)
    app = build_app(CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir))
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "1"])  # type: ignore[arg-type]
    assert result.exit_code == 2
    assert "refusing to bind '0.0.0.0'" in result.output


@pytest.mark.llama_server
def test_the_openai_client_chats_with_serve_over_the_real_llama_server(tmp_path: Path, llama_server):
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.runtime.runtime import Runtime

    env = {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "3", "ATOMIC_AGENT_SEED": "7"}

    def real_runtime(ask):
        return Runtime(boot(tmp_path / "state", environ=dict(env)), ask=ask, environ=env)

    serve = ServeHarness(tmp_path, runtime_factory=real_runtime)
    try:
        api = openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key="x", max_retries=0, timeout=600)
        completion = api.chat.completions.create(model="atomic-agent",
                                                 messages=[{"role": "user", "content": "Say hello."}])
        assert completion.choices[0].message.content  # the tiny model's words vary; an answer must arrive
        stream = api.chat.completions.create(model="atomic-agent", stream=True,
                                             messages=[{"role": "user", "content": "Say hello again."}])
        chunks = list(stream)
        assert chunks[-1].choices[0].finish_reason in ("stop", "length")
        assert "".join(c.choices[0].delta.content or "" for c in chunks)
    finally:
        serve.stop()


def test_session_search_route_finds_what_was_said_and_takes_fts_syntax_literally(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider([calls(("reply", {"text": "Kites fly on Tuesdays."}))]))
    try:
        base = serve.base_url
        done = httpx.post(f"{base}/v1/chat/completions", timeout=WAIT_S,
                          json={"model": "m", "messages": [{"role": "user", "content": "when do kites fly?"}]})
        sid = done.headers["X-Atomic-Session"]
        found = httpx.get(f"{base}/api/sessions/search", params={"q": 'kites NEAR("'})
        assert found.status_code == 200
        assert {(h["sessionId"], h["channel"]) for h in found.json()["data"]} == {(sid, "http")}
        assert httpx.get(f"{base}/api/sessions/search", params={"q": "kites", "channel": "telegram"}).json() == \
            {"object": "list", "data": []}
        empty = httpx.get(f"{base}/api/sessions/search", params={"q": "()"})
        assert empty.status_code == 400 and "no words" in empty.json()["error"]["message"]
        assert httpx.get(f"{base}/api/sessions/search", params={"q": "x", "channel": "mars"}).status_code == 400
    finally:
        serve.stop()


def test_the_sessions_list_says_who_started_each_session_and_what_channel_it_counts_as(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(default=calls(("reply", {"text": "done"}))))
    try:
        base = serve.base_url
        httpx.post(f"{base}/v1/chat/completions", json={"model": "m", "messages": HI}, timeout=WAIT_S)
        scheduled = serve.run_async(lambda: serve.runtime.run_turn("check the backups", origin="scheduler"))
        listed = {s["id"]: s for s in httpx.get(f"{base}/api/sessions").json()["data"]}
        assert (listed[scheduled.session_id]["origin"], listed[scheduled.session_id]["channel"]) == \
            ("scheduler", "local")  # searched as the user's own, shown as the scheduler's
        (client,) = [s for sid, s in listed.items() if sid != scheduled.session_id]
        assert (client["origin"], client["channel"]) == ("http", "http")
        empty = httpx.post(f"{base}/api/sessions", json={"workingDir": str(tmp_path)}).json()
        assert (empty["origin"], empty["channel"]) == (None, "local")  # no turn yet: nobody started it
    finally:
        serve.stop()
