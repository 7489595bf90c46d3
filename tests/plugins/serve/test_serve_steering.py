"""POST/GET/DELETE /api/sessions/{id}/steer: accepted (200), refused (409), full (429), and
undelivered (parked with a seq, mirrored on the response, acknowledged by cursor)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai

from atomic_agent.api import MAX_PENDING_STEERS
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness, ThreadGatedProvider

HI = [{"role": "user", "content": "start"}]


def new_session(serve: ServeHarness) -> str:
    return httpx.post(f"{serve.base_url}/api/sessions", json={}).json()["id"]


def steer(serve: ServeHarness, session_id: str, text: str) -> httpx.Response:
    return httpx.post(f"{serve.base_url}/api/sessions/{session_id}/steer", json={"text": text})


def complete_in_thread(serve: ServeHarness, session_id: str, out: dict) -> threading.Thread:
    def run() -> None:
        out["response"] = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                                     json={"model": "m", "messages": HI}, headers={"X-Atomic-Session": session_id})

    thread = threading.Thread(target=run)
    thread.start()
    return thread


READ_THEN_REPLY = [calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))]


@contextmanager
def turn_held_at_its_first_step(tmp_path: Path, script: list[str]) -> Iterator[
        tuple[ServeHarness, str, Callable[[], httpx.Response]]]:
    """A serve turn on a new session, held inside its first inference; `finish()` lets it run
    to the end and gives the chat response."""
    provider = ThreadGatedProvider(script, gate_at=0)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid, out = new_session(serve), {}
        thread = complete_in_thread(serve, sid, out)
        assert provider.entered.wait(WAIT_S)

        def finish() -> httpx.Response:
            provider.release.set()
            thread.join(WAIT_S)
            return out["response"]

        yield serve, sid, finish
    finally:
        provider.release.set()
        serve.stop()


def test_steer_into_a_running_turn_is_accepted_and_applied(tmp_path: Path):
    with turn_held_at_its_first_step(tmp_path, READ_THEN_REPLY) as (serve, sid, finish):
        accepted = steer(serve, sid, "do X instead")
        assert accepted.status_code == 200 and accepted.json() == {"steered": True, "outcome": "accepted"}
        body = finish().json()
        assert body["choices"][0]["message"]["content"] == "ok" and "undelivered_steers" not in body
        users = [e.text for e in serve.runtime.sessions.load(sid).entries if e.kind == "user"]
        assert users == ["start", "do X instead"]


def test_a_retried_steer_with_the_same_idempotency_key_is_applied_once(tmp_path: Path):
    with turn_held_at_its_first_step(tmp_path, READ_THEN_REPLY) as (serve, sid, finish):
        url = f"{serve.base_url}/api/sessions/{sid}/steer"
        keyed = {"Idempotency-Key": "steer-1"}
        first = httpx.post(url, json={"text": "do X instead"}, headers=keyed)
        retry = httpx.post(url, json={"text": "do X instead"}, headers=keyed)  # the first answer was lost
        other = httpx.post(url, json={"text": "something else"}, headers=keyed)
        assert first.status_code == 200 and first.json() == {"steered": True, "outcome": "accepted"}
        assert retry.status_code == 200 and retry.json()["replayed"] is True
        assert retry.headers["Idempotent-Replayed"] == "true"
        assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
        finish()
        users = [e.text for e in serve.runtime.sessions.load(sid).entries if e.kind == "user"]
        assert users == ["start", "do X instead"]  # folded in once


def test_steer_without_a_running_turn_is_refused_with_409(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider())
    try:
        sid = new_session(serve)
        refused = steer(serve, sid, "anyone?")
        assert refused.status_code == 409
        body = refused.json()
        assert body["steered"] is False and body["error"]["code"] == "no_running_turn"
        assert "POST /v1/chat/completions" in body["error"]["message"]
        assert serve.ctx.parked.read(sid) == ([], 0)  # refused, not swallowed
        assert steer(serve, "nope", "x").status_code == 404
        assert httpx.post(f"{serve.base_url}/api/sessions/{sid}/steer", json={"txt": "x"}).status_code == 400
    finally:
        serve.stop()


def test_steer_past_the_inbox_cap_is_refused_with_429(tmp_path: Path):
    with turn_held_at_its_first_step(tmp_path, READ_THEN_REPLY) as (serve, sid, finish):
        codes = [steer(serve, sid, f"s{i}").status_code for i in range(MAX_PENDING_STEERS + 1)]
        assert codes == [200] * MAX_PENDING_STEERS + [429]
        assert finish().status_code == 200


def test_undelivered_steers_are_parked_mirrored_and_acked_by_cursor(tmp_path: Path):
    provider = ThreadGatedProvider([calls(("reply", {"text": "done already"}))], gate_at=0)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid, out = new_session(serve), {}
        thread = complete_in_thread(serve, sid, out)
        assert provider.entered.wait(WAIT_S)
        assert steer(serve, sid, "too late 1").status_code == 200
        assert steer(serve, sid, "too late 2").status_code == 200
        provider.release.set()
        thread.join(WAIT_S)
        mirrored = out["response"].json()["undelivered_steers"]
        assert [m["text"] for m in mirrored] == ["too late 1", "too late 2"]
        parked = httpx.get(f"{serve.base_url}/api/sessions/{sid}/steer").json()
        assert parked["steers"] == mirrored and parked["discarded"] == 0  # the same messages, same seqs
        again = httpx.get(f"{serve.base_url}/api/sessions/{sid}/steer").json()
        assert again == parked  # reads never consume
        assert httpx.delete(f"{serve.base_url}/api/sessions/{sid}/steer").status_code == 400
        first_seq = mirrored[0]["seq"]
        acked = httpx.delete(f"{serve.base_url}/api/sessions/{sid}/steer", params={"through": first_seq}).json()
        assert acked["remaining"] == 1
        left = httpx.get(f"{serve.base_url}/api/sessions/{sid}/steer").json()["steers"]
        assert [s["text"] for s in left] == ["too late 2"]
        # each parked steer names its stored copy; the acknowledgement dismisses it
        assert all(m.get("steerId") for m in mirrored)
        with sqlite3.connect(serve.ctx.runtime.sessions.path) as other:
            stored = [r[0] for r in other.execute("select text from steer_queue order by steer_id")]
        assert stored == ["too late 2"]
        assert httpx.delete(f"{serve.base_url}/api/sessions/{sid}").status_code == 200
        assert serve.ctx.parked.read(sid) == ([], 0)  # dropped with the session row
    finally:
        provider.release.set()
        serve.stop()


def test_extension_stream_carries_steer_undelivered_and_a_vanilla_stream_stays_strict(tmp_path: Path):
    provider = ThreadGatedProvider([calls(("reply", {"text": "one"})), calls(("reply", {"text": "two"}))], gate_at=0)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid = new_session(serve)
        lines: list[str] = []

        def stream() -> None:
            with httpx.stream("POST", f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                              json={"model": "m", "messages": HI, "stream": True},
                              headers={"X-Atomic-Session": sid, "X-Atomic-Extensions": "events"}) as response:
                lines.extend(response.iter_lines())

        thread = threading.Thread(target=stream)
        thread.start()
        assert provider.entered.wait(WAIT_S)
        assert steer(serve, sid, "late").status_code == 200
        provider.release.set()
        thread.join(WAIT_S)
        events = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
        assert "turn_started" in events and "steer_undelivered" in events
        data = [line for line in lines if line.startswith("data: ")]
        undelivered = next(d for d in data if '"type":"steer_undelivered"' in d)
        assert '"seq":' in undelivered and '"text":"late"' in undelivered
        assert data[-1] == "data: [DONE]"
        # a vanilla OpenAI stream: data lines only, parsed by the official client
        stream = openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key="x", max_retries=0).chat.completions.create(
            model="m", messages=HI, stream=True, extra_headers={"X-Atomic-Session": sid})
        assert "".join(c.choices[0].delta.content or "" for c in stream) == "two"
        with httpx.stream("POST", f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                          json={"model": "m", "messages": HI, "stream": True}) as response:
            raw = list(response.iter_lines())
        assert not [line for line in raw if line.startswith("event:")]
        assert [line for line in raw if line][-1] == "data: [DONE]"
    finally:
        provider.release.set()
        serve.stop()


def test_a_failed_turn_still_parks_its_undelivered_steers(tmp_path: Path):
    from atomic_agent.api import ProviderUnavailableError

    provider = ThreadGatedProvider([ProviderUnavailableError("server went away")], gate_at=0)
    serve = ServeHarness(tmp_path, provider)
    try:
        sid, out = new_session(serve), {}
        thread = complete_in_thread(serve, sid, out)
        assert provider.entered.wait(WAIT_S)
        assert steer(serve, sid, "stranded").status_code == 200
        provider.release.set()
        thread.join(WAIT_S)
        failed = out["response"]
        assert failed.status_code == 503 and failed.json()["error"]["type"] == "agent.transport"
        assert [m["text"] for m in failed.json()["undelivered_steers"]] == ["stranded"]
        parked = httpx.get(f"{serve.base_url}/api/sessions/{sid}/steer").json()["steers"]
        assert [p["text"] for p in parked] == ["stranded"]
    finally:
        provider.release.set()
        serve.stop()
