"""Tasks on the fleet's PostgreSQL: several scheduler processes on one database run each due
occurrence exactly once; a scheduler SIGKILLed mid-run has its run settled by another as a
start settles it on SQLite (a run that may have had side effects is recorded `interrupted`,
never sent again); an unreachable database refuses a task before it is acknowledged."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ScriptedProvider, store_clock
from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
from atomic_agent.plugins.postgresql.pg_backend import PgBackend
from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.postgresql.testing.pg_server import free_port
from atomic_agent.plugins.tasks.task_errors import TaskStoreError
from atomic_agent.plugins.tasks.task_service import TaskService
from atomic_agent.plugins.tasks.tasks_config import TasksConfig
from atomic_agent.turns import session_backend_kit
from tests.plugins.postgresql.pg_kit import backend_on, raw
from tests.plugins.tasks.fleet_scheduler import fleet_runtime

REPO = Path(__file__).resolve().parents[3]
DUE_TASKS = 24


def _child(tmp_path: Path, database: Any, host: str, *args: str) -> subprocess.Popen[str]:
    server, name = database
    return subprocess.Popen([sys.executable, "-m", "tests.plugins.tasks.fleet_scheduler", str(tmp_path / host),
                             server.url(name), *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PGTEST_PASSWORD": server.password})


async def _line(child: subprocess.Popen[str], timeout_s: float = 90) -> str:
    line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), timeout_s)  # type: ignore[union-attr]
    if not line.strip():  # the child ended: say why
        child.wait(10)
        raise AssertionError(child.stderr.read())  # type: ignore[union-attr]
    return line.strip()


@pytest.mark.parametrize("hosts", [2, 3])
async def test_scheduler_processes_on_one_database_run_each_due_occurrence_exactly_once(
        tmp_path: Path, postgresql_database: Any, hosts: int):
    children = [_child(tmp_path, postgresql_database, f"host-{n}", "drain", str(DUE_TASKS)) for n in range(hosts)]
    try:
        for child in children:
            assert await _line(child) == "ready"
        backend = backend_on(postgresql_database)
        try:
            maker = TaskService(tmp_path / "maker", TasksConfig(), shared=SharedDatabase(backend))
            for n in range(DUE_TASKS):  # due now: every host's next tick sees all of them
                maker.create(f"fleet task {n}")
        finally:
            backend.close()
        shares = [int((await _line(child, 150)).split()[1]) for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait(10)
    assert sum(shares) == DUE_TASKS, shares
    with raw(postgresql_database) as conn:
        runs = conn.execute("SELECT task_id, status FROM task_runs WHERE status != 'skipped'").fetchall()
        texts = Counter(r[0] for r in conn.execute("SELECT text FROM turns WHERE origin = 'scheduler'").fetchall())
        states = Counter(r[0] for r in conn.execute("SELECT status FROM tasks").fetchall())
    assert len(runs) == DUE_TASKS and len({task_id for task_id, _ in runs}) == DUE_TASKS  # one run per occurrence
    assert {status for _, status in runs} == {"completed"} and states == {"completed": DUE_TASKS}
    assert texts == Counter({f"fleet task {n}": 1 for n in range(DUE_TASKS)})  # each message sent once
    print(f"{hosts} schedulers: claims per host {shares}", file=sys.stderr)


async def test_a_run_whose_scheduler_was_killed_is_settled_by_a_live_one_and_never_sent_again(
        tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    live = await fleet_runtime(tmp_path / "host-b", server.url(name), server.password, ScriptedProvider([]))
    try:
        service = live.service("tasks")
        service.takeover_interval_s = 0  # every tick looks for a dead owner's runs
        await service.tick()  # running before the other host dies: the takeover happens on a later tick
        task = service.create("effects, then hangs")
        child = _child(tmp_path, postgresql_database, "host-a", "hang")
        try:
            _, task_id, turn_id = (await _line(child)).split()
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        assert task_id == task.id
        report = await asyncio.wait_for(service.tick(), 60)
        assert report.claimed == 0  # nothing due: the dead host's run is settled, not run again
        settled = service.store.get(task.id)
        assert (settled.status, settled.owner, settled.turn_id) == ("failed", None, turn_id)
        assert [(r.status, r.turn_id) for r in service.store.runs(task.id)] == [("interrupted", turn_id)]
        assert (await service.tick()).claimed == 0
        with raw(postgresql_database) as conn:
            sent = conn.execute("SELECT count(*) FROM turns WHERE text = 'effects, then hangs'").fetchone()[0]
            runners = [r[0] for r in conn.execute("SELECT owner FROM task_runners").fetchall()]
        assert sent == 1
        assert runners == [service.runner.owner]  # the dead runner is struck from what `status` counts
    finally:
        await live.close()


def test_an_unreachable_database_refuses_a_task_before_acknowledging_it(tmp_path: Path):
    url = DatabaseUrl("agent", "127.0.0.1", free_port(), "nowhere", "s3cret-pw")
    backend = PgBackend(url, session_backend_kit, connect_timeout_s=2)
    try:
        service = TaskService(tmp_path, TasksConfig(), shared=SharedDatabase(backend), clock=store_clock.now_ms)
        with pytest.raises(TaskStoreError, match="cannot be used") as refused:
            service.create("never acknowledged")
        assert "s3cret-pw" not in str(refused.value)
        assert "ATOMIC_AGENT_STORAGE_PASSWORD" in str(refused.value)  # says what to check
        assert not (tmp_path / "tasks.sqlite").exists()  # nothing was kept elsewhere either
    finally:
        backend.close()


def test_task_commands_and_status_on_another_host_read_and_write_the_fleets_tasks(
        tmp_path: Path, postgresql_database: Any):
    from tests.cli.run_cli import run_cli

    server, name = postgresql_database
    state = tmp_path / "host-c"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"storage": {"url": server.url(name)},
                                                   "plugins": {"disabled": ["memory_reflection", "memory_notes",
                                                                            "memory_profile"]}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}

    def cli(*args: str) -> Any:
        done = run_cli(["--state-dir", str(state), *args], env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    made = json.loads(cli("task", "create", "made on host c", "--in", "60", "--json").stdout)
    backend = backend_on(postgresql_database)
    try:  # another host of the fleet sees it
        other = TaskService(tmp_path / "host-d", TasksConfig(), shared=SharedDatabase(backend))
        assert other.store.get(made["id"]).message == "made on host c"
    finally:
        backend.close()
    assert [t["id"] for t in json.loads(cli("task", "list", "--json").stdout)] == [made["id"]]
    assert cli("task", "cancel", made["id"]).stdout.strip() == f"task {made['id']} cancelled"
    lines = json.loads(cli("status", "--json").stdout)["lines"]
    tasks_line = next(line for line in lines if line["section"] == "tasks" and line["name"] == "tasks")
    assert tasks_line["detail"]["counts"] == {"cancelled": 1}
    doctor = run_cli(["--state-dir", str(state), "doctor", "--json"], env=env, timeout=120)
    assert "kept in the fleet's PostgreSQL" in doctor.stdout
    assert not (state / "tasks.sqlite").exists()  # nothing was read from (or made in) the embedded store


def test_a_host_whose_clock_runs_ahead_fires_nothing_early_on_the_fleets_database(
        tmp_path: Path, postgresql_database: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = backend_on(postgresql_database)
    try:
        honest = TaskService(tmp_path / "honest", TasksConfig(), shared=SharedDatabase(backend))
        in_five_minutes = honest.clock() + 5 * 60_000
        task = honest.create("check the backups", schedule={"kind": "at", "at": in_five_minutes})
        real_now_ms = store_clock.now_ms
        monkeypatch.setattr(store_clock, "now_ms", lambda: real_now_ms() + 10 * 60_000)  # 10 minutes ahead
        ahead = TaskService(tmp_path / "ahead", TasksConfig(), shared=SharedDatabase(backend))
        assert ahead.store.due_ids(ahead.clock(), 10) == []  # its own clock would have found it due
        assert abs(ahead.clock() - honest.store.database_clock_ms()) < 5_000  # within the read's time
        assert task.id in ahead.store.due_ids(ahead.clock() + 6 * 60_000, 10)  # due by the database's clock
    finally:
        backend.close()
