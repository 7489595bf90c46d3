"""No content crosses sessions through the server: the managed server (and the test fixture
and the embedding daemon) start with llama-server's RAM prompt cache off, and `llama status`
and `doctor` say plainly whether the server in use may hand one conversation's cached prompt
to another."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.llama_config import LlamaConfig
from atomic_agent.plugins.llama_server.server_process import LaunchSpec
from atomic_agent.plugins.llama_server.server_status import prompt_cache_findings, server_status
from atomic_agent.plugins.llama_server.shared_prompt_cache import (
    OFF,
    ON,
    UNKNOWN,
    build_number,
    cache_ram_from_argv,
    listening_pid,
    prompt_cache_state,
    state_of_process,
)
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer

from .test_manage_lifecycle import FAKE_SERVER


def test_every_managed_launch_turns_the_ram_prompt_cache_off() -> None:
    chat = LaunchSpec(binary=Path("/b/llama-server"), model=Path("/m.gguf")).argv()
    embed = LaunchSpec(binary=Path("/b/llama-server"), model=Path("/e.gguf"), pooling="mean").argv()
    for argv in (chat, embed):
        assert argv[argv.index("--cache-ram") + 1] == "0"


@pytest.mark.parametrize(("argv", "env", "expected"), [
    (["llama-server", "--cache-ram", "0"], {}, 0),
    (["llama-server", "-cram", "2048"], {}, 2048),
    (["llama-server", "--cache-ram=-1"], {}, -1),
    (["llama-server"], {"LLAMA_ARG_CACHE_RAM": "0"}, 0),
    (["llama-server", "--cache-ram", "0"], {"LLAMA_ARG_CACHE_RAM": "4096"}, 0),  # the flag wins
    (["llama-server", "-m", "x.gguf"], {}, None),
    (["llama-server", "--cache-ram", "lots"], {}, None),
])
def test_cache_ram_is_read_from_every_spelling(argv: list[str], env: dict[str, str], expected: int | None) -> None:
    assert cache_ram_from_argv(argv, env) == expected


def test_build_numbers_are_read_from_build_info() -> None:
    assert build_number("b7432-1a2b3c4") == 7432
    assert build_number("6123 (abc)") == 6123
    assert build_number("") is None
    assert build_number("b0-unknown") is None  # built from a tarball without git: unknown, not old


def _sleeper(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *args], env=env)
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    deadline = time.monotonic() + 10
    while b"time.sleep" not in cmdline.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)  # the child has not exec'd yet
    return proc


@pytest.mark.parametrize(("args", "env", "state"), [
    (("--cache-ram", "0"), None, OFF),
    (("-cram", "512"), None, ON),
    ((), None, ON),  # not set: the server's default, 8 GiB, is on
    ((), {"LLAMA_ARG_CACHE_RAM": "0"}, OFF),
])
def test_a_running_process_is_judged_by_its_command_line_and_environment(args: tuple[str, ...],
                                                                          env: dict[str, str] | None,
                                                                          state: str) -> None:
    proc = _sleeper(*args, env=env)
    try:
        judged = state_of_process(proc.pid, "b7400-abc")
    finally:
        proc.kill()
        proc.wait()
    assert judged is not None and judged.state == state
    assert judged.shares_across_conversations == (state != OFF)


def test_a_build_older_than_the_cache_cannot_share_prompts() -> None:
    proc = _sleeper()
    try:
        judged = state_of_process(proc.pid, "b6000-abc")
    finally:
        proc.kill()
        proc.wait()
    assert judged is not None and judged.state == OFF


def test_the_listening_process_of_a_loopback_port_is_found() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        assert listening_pid(sock.getsockname()[1]) == __import__("os").getpid()


def test_a_remote_server_is_unknown_and_the_sentence_gives_the_fix() -> None:
    state = prompt_cache_state("http://192.0.2.10:8080", "b7400-abc")
    assert state.state == UNKNOWN and state.shares_across_conversations
    sentence = state.sentence()
    assert "--cache-ram 0" in sentence and "27148" in sentence


def test_status_of_a_server_the_user_runs_warns_when_cached_prompts_may_cross(tmp_path: Path) -> None:
    # the fake listens in this very process, whose command line has no --cache-ram: on by default
    with FakeLlamaServer(props={"total_slots": 2, "build_info": "b7400-abc",
                                "default_generation_settings": {"n_ctx": 4096}}) as fake:
        status = server_status(LlamaConfig(url=fake.base_url), tmp_path, environ={})
        assert status.prompt_cache is not None and status.prompt_cache.state == ON
        assert status.to_json()["promptCache"]["sharesAcrossConversations"] is True
        (tmp_path / "config.json").write_text(json.dumps({"llama": {"url": fake.base_url}}))
        findings = prompt_cache_findings(tmp_path)
    assert [f.level for f in findings] == ["warn"]
    assert "--cache-ram 0" in findings[0].advice


def test_status_of_a_server_started_with_the_cache_off_says_so(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    script = tmp_path / "llama-server"
    script.write_text(FAKE_SERVER)
    proc = subprocess.Popen([sys.executable, str(script), "--port", str(port), "-c", "4096", "--parallel", "2",
                             "-m", "m.gguf", "--cache-ram", "0"], stdout=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            status = server_status(LlamaConfig(url=url), tmp_path, environ={})
            if status.health == "ok":
                break
            time.sleep(0.1)
        assert status.prompt_cache is not None and status.prompt_cache.state == OFF, status
        (tmp_path / "config.json").write_text(json.dumps({"llama": {"url": url}}))
        assert [f.level for f in prompt_cache_findings(tmp_path)] == ["ok"]
    finally:
        proc.kill()
        proc.wait()


def test_doctor_says_nothing_about_a_server_that_is_not_running(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"llama": {"url": "http://127.0.0.1:9"}}))
    assert prompt_cache_findings(tmp_path) == []


def test_a_test_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """The fixture's servers are started with die_with_parent: a pytest killed mid-run (even by
    SIGKILL, so no fixture teardown runs) leaves no llama-server behind."""
    import os
    import signal
    import textwrap

    from atomic_agent.plugins.llama_server.server_process import free_loopback_port, process_alive

    binary = tmp_path / "llama-server"
    binary.write_text(f"#!{sys.executable}\n{FAKE_SERVER}")
    binary.chmod(0o755)
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from atomic_agent.plugins.llama_server.server_launch import start_server
        from atomic_agent.plugins.llama_server.server_process import LaunchSpec, ServerPaths
        spec = LaunchSpec(binary=Path({str(binary)!r}), model=Path({str(tmp_path / 'm.gguf')!r}),
                          port={free_loopback_port()})
        out = start_server(spec, ServerPaths.for_state_dir(Path({str(tmp_path / 'state')!r})), timeout_s=30,
                           die_with_parent=True)
        print(out.pid, flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    server_pid = int(parent.stdout.readline())
    assert process_alive(server_pid)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while process_alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = process_alive(server_pid)
    if alive:
        os.kill(server_pid, signal.SIGKILL)
    assert not alive, "the server outlived the process that started it"
