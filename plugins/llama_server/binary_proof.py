"""Proving a llama-server binary: start it on a model on a free loopback port, wait for
/health, decode a few tokens, stop it. `--version` alone proves nothing: the AMX crash
(see build_variant) passes it and dies on the first decode."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from .llama_config import loopback_url
from .server_health import HEALTH_OK, check_health
from .server_process import free_loopback_port, log_tail

PROOF_TIMEOUT_S = 180.0
PROOF_PROMPT = "The capital of France is"
PROOF_TOKENS = 4


@attrs.frozen
class ProofResult:
    ok: bool
    detail: str  # one sentence: what the binary did
    log_tail: tuple[str, ...] = ()
    signal_name: str = ""  # set when the binary died by a signal
    seconds: float = 0.0

    def explain(self) -> str:
        tail = "\n".join(self.log_tail[-12:])
        return self.detail + (f"\nlast lines of its output:\n{tail}" if tail else "")


def signal_name(returncode: int | None) -> str:
    """`SIGSEGV` for a child killed by signal 11 (Popen reports -11); "" otherwise."""
    if returncode is None or returncode >= 0:
        return ""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def prove_binary(binary: Path, model: Path, *, timeout_s: float = PROOF_TIMEOUT_S, threads: int = 2) -> ProofResult:
    """Run `binary` on `model` and ask it for PROOF_TOKENS tokens; ok only when it answered
    with at least one generated token and was still alive afterwards."""
    started = time.monotonic()
    port = free_loopback_port()
    base_url = loopback_url("127.0.0.1", port)
    argv = [str(binary), "--host", "127.0.0.1", "--port", str(port), "-m", str(model), "-c", "512",
            "--parallel", "1", "--threads", str(threads), "--no-webui"]
    with tempfile.TemporaryDirectory(prefix="llama-proof-") as tmp:
        log_file = Path(tmp) / "proof.log"
        with log_file.open("wb") as log:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True, close_fds=True)
            except OSError as exc:
                return ProofResult(False, f"{binary} could not be started ({exc.strerror or exc})")
        try:
            result = _exercise(proc, base_url, timeout_s)
        finally:
            _stop(proc)
        elapsed = time.monotonic() - started
        tail = tuple(log_tail(log_file, 25))
        if result is None:
            died = signal_name(proc.returncode)
            how = f"died by {died}" if died else f"exited with code {proc.returncode}"
            return ProofResult(False, f"{binary.name} {how} while loading {model.name} or decoding its first "
                               "tokens", tail, died, elapsed)
        ok, detail = result
        return ProofResult(ok, detail, () if ok else tail, "", elapsed)


def _exercise(proc: subprocess.Popen[bytes], base_url: str, timeout_s: float) -> tuple[bool, str] | None:
    """(ok, detail) from a live server, or None when the process died first."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            return None
        health, _detail = check_health(base_url, timeout_s=1.0)
        if health == HEALTH_OK:
            break
        if time.monotonic() >= deadline:
            return False, f"it did not become healthy within {timeout_s:.0f} s (last /health: {health})"
        time.sleep(0.1)
    body = {"prompt": PROOF_PROMPT, "n_predict": PROOF_TOKENS, "temperature": 0.0, "cache_prompt": False}
    try:
        response = httpx.post(f"{base_url}/completion", json=body, timeout=max(5.0, deadline - time.monotonic()))
    except httpx.HTTPError as exc:
        if _wait_exit(proc, 2.0):
            return None
        return False, f"its /completion request failed ({type(exc).__name__}: {exc})"
    if _wait_exit(proc, 0.2):
        return None
    if response.status_code != 200:
        return False, f"/completion answered HTTP {response.status_code}: {response.text[:200]}"
    try:
        data = response.json()
        predicted = int(data.get("tokens_predicted") or 0)
        text = str(data.get("content", ""))
    except (ValueError, TypeError, AttributeError):
        return False, f"/completion answered something that is not llama-server's JSON: {response.text[:200]}"
    if predicted < 1:
        return False, "/completion decoded no tokens"
    return True, f"decoded {predicted} tokens ({text.strip()[:40]!r})"


def _wait_exit(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _wait_exit(proc, 10.0):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
