"""Cross-process slot leases: two processes (or two sessions of one) never pin one llama-server
slot at once; a crashed holder's lease is free again; a busy machine waits with a notice and
then lets the server choose; a folder that cannot hold leases never pins a slot blindly."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from atomic_agent.api import CompletionRequest
from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider
from atomic_agent.plugins.llama_server.slot_leases import ANY_SLOT, SlotLeases, lease_folder
from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer

URL = "http://127.0.0.1:19091"


def _holder(base: Path, slot: int) -> subprocess.Popen[str]:
    """Another process that takes `slot`'s lease, says so, and holds it until killed."""
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from atomic_agent.plugins.llama_server.slot_leases import SlotLeases
        lease = SlotLeases({URL!r}, [Path({str(base)!r})]).try_take({slot})
        print("held" if lease else "busy", flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_slot_another_process_holds_is_never_leased(tmp_path: Path) -> None:
    other = _holder(tmp_path, 0)
    try:
        leases = SlotLeases(URL, [tmp_path])
        assert leases.try_take(0) is None
        assert leases.held(2) == {0: other.pid}  # the holder is named, for the wait notice
        mine = leases.try_take(1)
        assert mine is not None and mine.slot == 1
        mine.release()
    finally:
        other.kill()
        other.wait()


def test_a_killed_holders_lease_is_free_again(tmp_path: Path) -> None:
    other = _holder(tmp_path, 0)
    os.kill(other.pid, signal.SIGKILL)
    other.wait()
    assert (lease_folder(tmp_path, URL) / "slot-0.lock").exists()  # the file it left behind
    lease = SlotLeases(URL, [tmp_path]).try_take(0)
    assert lease is not None, "a lock file left by a killed process must not keep the slot"
    lease.release()


def test_two_sessions_of_one_process_exclude_each_other(tmp_path: Path) -> None:
    leases = SlotLeases(URL, [tmp_path])
    first = leases.try_take(0)
    assert first is not None
    assert leases.try_take(0) is None
    assert SlotLeases(URL, [tmp_path]).try_take(0) is None  # another provider object in the same process
    first.release()
    again = leases.try_take(0)
    assert again is not None
    again.release()


def test_leases_are_per_server_url(tmp_path: Path) -> None:
    lease = SlotLeases(URL, [tmp_path]).try_take(0)
    other = SlotLeases("http://127.0.0.1:8080", [tmp_path]).try_take(0)
    assert lease is not None and other is not None
    lease.release()
    other.release()


def test_a_busy_wanted_slot_moves_the_request_to_a_free_one_and_it_stays_there(tmp_path: Path) -> None:
    leases = SlotLeases(URL, [tmp_path], wait_s=0)
    blocker = SlotLeases(URL, [tmp_path]).try_take(0)
    assert blocker is not None

    async def take() -> int:
        lease = await leases.take(0, total_slots=3, reserved=2)
        lease.release()
        return lease.slot

    assert asyncio.run(take()) == 1
    blocker.release()
    # slot 0 is free now, but this process was pushed to 1: going back would evict the other's cache
    assert asyncio.run(take()) == 1


def test_the_background_slot_never_spills_onto_a_session_slot(tmp_path: Path) -> None:
    notices: list[str] = []
    leases = SlotLeases(URL, [tmp_path], wait_s=0.1, notice=notices.append)
    blocker = SlotLeases(URL, [tmp_path]).try_take(1)
    assert blocker is not None
    try:
        lease = asyncio.run(leases.take(1, total_slots=2, reserved=1))
        # waited, then pinned to the reserved slot without its lease (the server queues it
        # there); never slot 0, and never -1, which the server could run in idle slot 0
        assert (lease.slot, lease.fd) == (1, None) and lease.waited_s >= 0.1
        assert any("background" in n and "queue" in n for n in notices)
    finally:
        blocker.release()


def test_every_slot_busy_waits_with_a_notice_then_lets_the_server_choose(tmp_path: Path) -> None:
    notices: list[str] = []
    leases = SlotLeases(URL, [tmp_path], wait_s=0.2, notice=notices.append)
    other = _holder(tmp_path, 0)
    try:
        lease = asyncio.run(leases.take(0, total_slots=1))
    finally:
        other.kill()
        other.wait()
    assert lease.slot == ANY_SLOT and lease.fd is None
    assert lease.waited_s >= 0.2
    assert any("busy" in n and str(other.pid) in n and "llama.parallel" in n for n in notices)
    assert any("lets the server choose" in n for n in notices)


def test_a_slot_freed_during_the_wait_is_taken(tmp_path: Path) -> None:
    leases = SlotLeases(URL, [tmp_path], wait_s=5, notice=lambda _m: None)
    blocker = SlotLeases(URL, [tmp_path]).try_take(0)
    assert blocker is not None

    async def scenario() -> int:
        task = asyncio.create_task(leases.take(0, total_slots=1))
        await asyncio.sleep(0.2)
        blocker.release()
        lease = await task
        lease.release()
        return lease.slot

    assert asyncio.run(scenario()) == 0


def test_an_unusable_lease_folder_lets_the_server_choose_and_says_so_once(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "cache"
    not_a_dir.write_text("a file where the cache folder should be")
    notices: list[str] = []
    leases = SlotLeases(URL, [not_a_dir], notice=notices.append)
    assert asyncio.run(leases.take(0, total_slots=2)).slot == ANY_SLOT
    assert asyncio.run(leases.take(0, total_slots=2)).slot == ANY_SLOT
    assert len(notices) == 1
    assert "cannot keep llama-server slot leases" in notices[0] and str(not_a_dir) in notices[0]


def test_the_state_dir_holds_the_leases_when_the_cache_cannot(tmp_path: Path) -> None:
    bad = tmp_path / "cache"
    bad.write_text("")
    state = tmp_path / "state"
    leases = SlotLeases(URL, [bad, state], notice=pytest.fail)
    lease = leases.try_take(0)
    assert lease is not None and leases.folder == lease_folder(state, URL)
    lease.release()


def test_a_lock_file_that_cannot_be_written_still_leases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leases = SlotLeases(URL, [tmp_path])
    assert leases.folder is not None
    real_open = os.open

    def no_write(path: object, flags: int, *args: object) -> int:
        if str(path).endswith(".lock") and flags & os.O_RDWR:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", no_write)
    lease = leases.try_take(0)
    assert lease is not None
    assert SlotLeases(URL, [tmp_path]).try_take(0) is None
    lease.release()


def test_completions_of_two_providers_never_pin_one_slot_at_once(tmp_path: Path) -> None:
    """Two providers (two processes' worth: separate lease objects) on one 3-slot server, each
    session wanting slot 0: while both complete, they run in different slots."""

    async def scenario(url: str) -> list[int]:
        a = LlamaServerProvider(url, "managed", lease_bases=(tmp_path,), slot_wait_s=5)
        b = LlamaServerProvider(url, "managed", lease_bases=(tmp_path,), slot_wait_s=5)
        for p in (a, b):
            await p.props()
        req = CompletionRequest(prompt="hello", slot_id=a.slot_for("s"), stream=False)
        assert req.slot_id == 0 and b.slot_for("t") == 0
        done = await asyncio.gather(a.complete(req), b.complete(req))
        await a.close()
        await b.close()
        return [c.slot_id for c in done]

    with FakeLlamaServer([Delay(0.5, "one"), Delay(0.5, "two")], total_slots=3) as fake:
        served = asyncio.run(scenario(fake.base_url))
        sent = sorted(body["id_slot"] for body in fake.completion_bodies)
    assert sent == [0, 1], "the second completion must not pin the slot the first holds"
    assert sorted(served) == [0, 1]


def test_a_provider_without_lease_folders_pins_as_the_slot_manager_says() -> None:
    async def scenario(url: str) -> int:
        provider = LlamaServerProvider(url, "external")
        await provider.props()
        await provider.complete(CompletionRequest(prompt="x", slot_id=provider.slot_for("s"), stream=False))
        await provider.close()
        return 0

    with FakeLlamaServer(["ok"]) as fake:
        asyncio.run(scenario(fake.base_url))
        assert fake.completion_bodies[0]["id_slot"] == 0


def test_waiting_for_a_slot_does_not_block_the_event_loop(tmp_path: Path) -> None:
    leases = SlotLeases(URL, [tmp_path], wait_s=0.3, notice=lambda _m: None)
    blocker = SlotLeases(URL, [tmp_path]).try_take(0)
    assert blocker is not None
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        end = time.monotonic() + 0.25
        while time.monotonic() < end:
            ticks += 1
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        await asyncio.gather(leases.take(0, total_slots=1), ticker())

    asyncio.run(scenario())
    blocker.release()
    assert ticks > 5


def test_a_server_restart_mid_turn_frees_the_lease_and_the_next_request_reads_the_new_slots(tmp_path: Path) -> None:
    """The connection drops mid-completion (the server went away): the lease is given back at
    once, and the next completion re-reads /props first; the server came back with one slot, so
    a request for a slot that no longer exists goes out as the server's choice instead of failing."""
    from atomic_agent.api import ProviderError
    from atomic_agent.plugins.llama_server.testing.fake_llama_server import DropConnection

    async def scenario(fake: FakeLlamaServer) -> bool:
        provider = LlamaServerProvider(fake.base_url, "managed", retries=0, lease_bases=(tmp_path,), slot_wait_s=1)
        await provider.props()
        slot = provider.reflection_slot()  # slot 2 of 3
        with pytest.raises(ProviderError):
            await provider.complete(CompletionRequest(prompt="x", slot_id=slot, stream=False))
        free_again = SlotLeases(fake.base_url, [tmp_path]).try_take(slot)
        if free_again is not None:
            free_again.release()
        fake.total_slots = 1  # "restarted" with --parallel 1
        await provider.complete(CompletionRequest(prompt="y", slot_id=slot, stream=False))
        assert (await provider.props()).total_slots == 1
        await provider.close()
        return free_again is not None

    with FakeLlamaServer([DropConnection(), "ok"], total_slots=3) as fake:
        freed = asyncio.run(scenario(fake))
        sent = [body.get("id_slot") for body in fake.completion_bodies]
    assert freed, "a dropped completion must give its slot lease back"
    assert sent[-1] in (-1, 0), f"after the restart the request must not pin a slot that is gone: {sent}"
