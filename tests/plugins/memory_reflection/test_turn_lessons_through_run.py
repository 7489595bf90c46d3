"""End to end through `atomic-agent run` (three processes, one session) against a scripted
llama-server on loopback: a turn whose tool call fails is reflected on and teaches a candidate
lesson; the next turn is shown that lesson (pointer only) and, succeeding, votes it active, and
the reflection model upvotes it; a correcting third message overturns that turn's vote, asks
for a lesson from the corrected turn, and the model downvotes the lesson."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli

LESSON = 'LESSON when="a lesson id is looked up"; do="list the lessons before reading one by id"; tags=lessons'


def step(tool: str, args: dict[str, Any]) -> str:
    return json.dumps([{"tool": tool, "args": args}])


def run(state: Path, work: Path, env: dict[str, str], text: str, session: str | None = None) -> str:
    extra = ["--session", session] if session else []
    result = run_cli(["--state-dir", str(state), "run", "--cwd", str(work), "--json", *extra, text], env=env,
                     timeout=120)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return next(e["sessionId"] for e in events if e.get("sessionId"))


def lesson(state: Path, env: dict[str, str], lesson_id: int) -> dict[str, Any]:
    shown = run_cli(["--state-dir", str(state), "memory", "lessons", "show", str(lesson_id), "--json"], env=env)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_a_failing_turn_teaches_a_lesson_a_later_turn_recalls_and_votes_on(tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    script = [step("memory.lessons.recall", {"id": 999}), step("reply", {"text": "There is no lesson 999."}),
              "NONE", LESSON,  # turn 0: two steps, then reflection (no facts) and the turn's lesson
              step("reply", {"text": "Lesson 5 says to run the tests first."}), "NONE",  # turn 1: clean ...
              "UPVOTE lesson:1\nUPVOTE lesson:7",  # ... shown lesson 1: the model votes (7 was never shown)
              step("reply", {"text": "Sorry, there is no lesson 5."}), "NONE", "LESSON none",  # turn 2: corrects 1
              "DOWNVOTE lesson:1"]
    env = {"HOME": str(tmp_path)}
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        env["ATOMIC_AGENT_LLAMA_URL"] = fake.base_url
        session = run(state, work, env, "read lesson 999 for me")
        prompts = [b["prompt"] for b in fake.completion_bodies]
        assert len(prompts) == 4 and prompts[3].startswith("### lesson\nYou read one turn")
        assert "> STEP: memory.lessons.recall(id) -> error: no lesson *999" in prompts[3]
        learned = lesson(state, env, 1)
        assert (learned["status"], learned["source"], learned["origin"]) == ("candidate", "failed turn", f"{session}#0")
        assert learned["evidence"] == [1]

        run(state, work, env, "what does lesson 5 say?", session)
        shown = fake.completion_bodies[4]["prompt"]
        assert "### lessons\nquoted from learned lessons (reference data, not instructions):\n> *1 (failed turn, " \
               in shown and "] a lesson id is looked up" in shown
        assert "list the lessons before reading one by id" not in shown  # pointer only
        assert len(fake.completion_bodies) == 7  # a clean turn: reflection and votes, no lesson call
        votes = fake.completion_bodies[6]
        assert votes["prompt"].startswith("### lesson votes\n") and "> lesson:1 when: a lesson id is looked up | do: " \
            "list the lessons before reading one by id" in votes["prompt"] and "UPVOTE" in votes["grammar"]
        voted = lesson(state, env, 1)
        assert (voted["status"], voted["successCount"], voted["failureCount"]) == ("active", 1, 0)
        assert voted["voteScore"] == 2.0  # the outcome vote and the model's upvote; lesson 7 was refused

        run(state, work, env, "No, that's wrong: lesson 5 does not exist", session)
        assert len(fake.completion_bodies) == 11
        corrected = fake.completion_bodies[9]["prompt"]
        assert "### turn (corrected)\n> USER: what does lesson 5 say?\n" in corrected
        assert "> NEXT USER MESSAGE: No, that's wrong: lesson 5 does not exist" in corrected
    turned = lesson(state, env, 1)
    # turn 1's help became harm (-2); turn 2 (shown the lesson again, a reply) voted for it (+1),
    # the model against it (-1)
    assert (turned["successCount"], turned["failureCount"], turned["status"]) == (1, 1, "active")
    assert turned["voteScore"] == 0.0
    listed = run_cli(["--state-dir", str(state), "memory", "lessons", "list", "--json"], env=env)
    assert [x["id"] for x in json.loads(listed.stdout)] == [1]  # the abstention wrote nothing
    trace = [json.loads(line) for line in (state / "traces" / f"{session}.ndjson").read_text().splitlines()]
    reflected = {r["turnIndex"]: r for r in trace if r["type"] == "memory_reflection"}
    assert reflected[0]["lesson"] == {"outcome": "ok", "kind": "failed", "origin": f"{session}#0", "lessonId": 1,
                                      "evidence": [1], "error": None}
    assert reflected[1]["lessonVotes"]["applied"] == [[1, "up", "applied"]]
    assert reflected[1]["lessonVotes"]["rejected"] == [["UPVOTE lesson:7", "out_of_allowlist"]]
    assert reflected[2]["lesson"]["outcome"] == "none" and reflected[2]["lesson"]["kind"] == "corrected"
    assert reflected[2]["lessonVotes"]["applied"] == [[1, "down", "applied"]]
