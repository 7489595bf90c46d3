"""Issue 32: the sidecar answers approvals another process raised on the same state dir. A
real `serve` process asks for a shell call; the sidecar lists the record (not shown by it),
then the sidecar and serve's HTTP route answer it in the same moment: exactly one answer
wins, the other is told who answered, via which surface and when, and the frozen call runs
exactly when the winner approved it, at most once."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.serve.test_serve_durable_approvals import AUTH, _swallow, pending, start_serve, wait_for
from tests.plugins.serve.test_serve_subprocess import WAIT_S, free_port
from tests.plugins.sidecar.sidecar_harness import SidecarHarness

ROUNDS = 3


async def _race(base: str, approval_id: str, sidecar: SidecarHarness) -> tuple[dict[str, Any], httpx.Response]:
    """The sidecar says once and serve's HTTP route says deny, released by one barrier."""
    barrier = threading.Barrier(2)
    out: dict[str, httpx.Response] = {}

    def serve_answer() -> None:
        barrier.wait()
        out["serve"] = httpx.post(f"{base}/api/approvals/{approval_id}", json={"decision": "deny"}, headers=AUTH,
                                  timeout=WAIT_S)

    thread = threading.Thread(target=serve_answer)
    thread.start()
    await asyncio.to_thread(barrier.wait)
    answer = await sidecar.request("approval_response", approvalId=approval_id, decision="once")
    await asyncio.to_thread(thread.join, WAIT_S)
    return answer, out["serve"]


async def test_sidecar_and_serve_racing_on_another_processs_record_exactly_one_wins(tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    state.mkdir()
    work.mkdir()
    (state / "config.json").write_text(json.dumps({
        "plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}))
    script = []
    for n in range(ROUNDS):
        script += [json.dumps([{"tool": "os.shell.run", "args": {"cmd": "sh", "args": ["-c", f"echo ran >> m{n}"]}}]),
                   json.dumps([{"tool": "reply", "args": {"text": f"round {n}"}}])]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    winners = []
    with FakeLlamaServer(script=script) as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve.stderr")
        sidecar = SidecarHarness(tmp_path, ScriptedProvider([]))
        try:
            for n in range(ROUNDS):
                body = {"model": "atomic-agent", "messages": [{"role": "user", "content": f"round {n}"}]}
                threading.Thread(target=lambda b=body: _swallow(lambda: httpx.post(
                    f"{base}/v1/chat/completions", json=b, timeout=WAIT_S,
                    headers={"X-Atomic-Session": "new", **AUTH})), daemon=True).start()
                shown = wait_for(lambda: pending(base), f"round {n}'s approval on serve")
                approval_id = shown[0]["approvalId"]
                listed = (await sidecar.ok("approval_list"))["approvals"]
                mine = [a for a in listed if a["approvalId"] == approval_id]
                assert mine and mine[0]["shownHere"] is False and mine[0]["kind"] == "approval"
                assert mine[0]["call"]["argv"][-1] == f"echo ran >> m{n}"

                answer, served = await _race(base, approval_id, sidecar)
                assert answer["ok"] != (served.status_code == 200), (answer, served.text)  # exactly one won
                if answer["ok"]:
                    winners.append("sidecar")
                    assert served.status_code == 410
                    assert "already answered 'once' by operator via sidecar at" in served.text
                    wait_for(lambda m=work / f"m{n}": m.exists(), f"round {n}'s call to run")
                else:
                    winners.append("serve")
                    assert answer["error"]["code"] == "approval_not_pending"
                    assert "already answered 'deny' by" in answer["error"]["message"]
                    assert "via serve at" in answer["error"]["message"]
                wait_for(lambda a=approval_id: not [p for p in pending(base) if p["approvalId"] == a],
                         f"round {n}'s approval to leave serve")
                assert not [a for a in (await sidecar.ok("approval_list"))["approvals"]
                            if a["approvalId"] == approval_id]
            time.sleep(0.3)  # a second run of any call would show by now
        finally:
            proc.kill()
            proc.wait(timeout=WAIT_S)
            await sidecar.close()
    for n, winner in enumerate(winners):
        marker = work / f"m{n}"
        assert (marker.read_text() if marker.exists() else "") == ("ran\n" if winner == "sidecar" else "")
