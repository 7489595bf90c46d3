"""`models pull` against a real HTTP server on 127.0.0.1 (stdlib, with Range support)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import attrs
import pytest

from atomic_agent.plugins.llama_server.llama_errors import DownloadError
from atomic_agent.plugins.llama_server.model_download import file_name_from_url, pull_model

PAYLOAD = b"GGUF" + bytes(range(256)) * 1200  # ~300 KiB, starts with the magic
DIGEST = hashlib.sha256(PAYLOAD).hexdigest()


@attrs.define
class ModelHost:
    """What the loopback server serves and how it misbehaves; records Range headers seen."""

    files: dict[str, bytes] = attrs.field(factory=dict)
    honour_range: bool = True
    cut_after: int | None = None  # close the connection after this many body bytes (once)
    hold_after: int | None = None  # send this many body bytes, then the rest only after `release`, slowly (once)
    release: threading.Event = attrs.field(factory=threading.Event)
    ranges: list[str | None] = attrs.field(factory=list)
    base_url: str = ""

    def url(self, name: str) -> str:
        return f"{self.base_url}/models/{name}"


def _handler(host: ModelHost) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (stdlib name)
            body = host.files.get(self.path.rsplit("/", 1)[-1]) if self.path.startswith("/models/") else None
            host.ranges.append(self.headers.get("Range"))
            if body is None:
                self.send_error(404, "Not Found")
                return
            start, status = 0, 200
            match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
            if match and host.honour_range:
                start = int(match.group(1))
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
            chunk = body[start:]
            self.send_response(status)
            self.send_header("Content-Length", str(len(chunk)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.end_headers()
            if host.cut_after is not None:
                self.wfile.write(chunk[:host.cut_after])
                self.wfile.flush()
                host.cut_after = None
                self.close_connection = True
                return
            if host.hold_after is not None:
                self._drip(chunk, host.hold_after)
                return
            self.wfile.write(chunk)

        def _drip(self, chunk: bytes, hold_after: int) -> None:
            host.hold_after = None
            try:
                self.wfile.write(chunk[:hold_after])
                self.wfile.flush()
                host.release.wait(30)
                for at in range(hold_after, len(chunk), 1024):  # about 2.5 s for the rest of PAYLOAD
                    self.wfile.write(chunk[at:at + 1024])
                    self.wfile.flush()
                    time.sleep(0.01)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading: it was cancelled

    return Handler


@pytest.fixture
def model_host() -> Iterator[ModelHost]:
    host = ModelHost(files={"tiny.Q4_0.gguf": PAYLOAD, "page.gguf": b"<html>login</html>"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(host))
    host.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield host
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_full_download_lands_atomically_with_its_checksum(tmp_path: Path, model_host: ModelHost) -> None:
    seen: list[tuple[int, int | None]] = []
    result = pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=DIGEST,
                        on_progress=lambda d, t: seen.append((d, t)))
    assert result.path == tmp_path / "tiny.Q4_0.gguf" and result.path.read_bytes() == PAYLOAD
    assert result.sha256 == DIGEST and result.resumed_from == 0 and not result.already_present
    assert not (tmp_path / "tiny.Q4_0.gguf.part").exists()
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD)) and model_host.ranges == [None]


def test_partial_download_is_resumed_with_a_range_request(tmp_path: Path, model_host: ModelHost) -> None:
    half = len(PAYLOAD) // 2
    (tmp_path / "tiny.Q4_0.gguf.part").write_bytes(PAYLOAD[:half])
    result = pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=DIGEST)
    assert model_host.ranges == [f"bytes={half}-"]
    assert result.resumed_from == half and result.path.read_bytes() == PAYLOAD


def test_interrupted_download_keeps_the_part_and_the_next_pull_resumes(tmp_path: Path, model_host: ModelHost) -> None:
    model_host.cut_after = 100_000
    with pytest.raises(DownloadError, match="again to resume"):
        pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path)
    part = tmp_path / "tiny.Q4_0.gguf.part"
    assert part.exists() and 0 < part.stat().st_size < len(PAYLOAD)
    assert not (tmp_path / "tiny.Q4_0.gguf").exists()
    kept = part.stat().st_size
    result = pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=DIGEST)
    assert model_host.ranges[-1] == f"bytes={kept}-" and result.path.read_bytes() == PAYLOAD


def test_server_ignoring_range_restarts_from_zero(tmp_path: Path, model_host: ModelHost) -> None:
    model_host.honour_range = False
    (tmp_path / "tiny.Q4_0.gguf.part").write_bytes(b"GGUF-stale-bytes-from-elsewhere")
    result = pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=DIGEST)
    assert result.resumed_from == 0 and result.path.read_bytes() == PAYLOAD


def test_a_complete_part_file_is_finished_without_a_second_body(tmp_path: Path, model_host: ModelHost) -> None:
    (tmp_path / "tiny.Q4_0.gguf.part").write_bytes(PAYLOAD)
    result = pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=DIGEST)
    assert result.path.read_bytes() == PAYLOAD and result.resumed_from == len(PAYLOAD)


def test_checksum_mismatch_leaves_nothing_behind(tmp_path: Path, model_host: ModelHost) -> None:
    wrong = "0" * 64
    with pytest.raises(DownloadError) as err:
        pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=wrong)
    assert DIGEST in str(err.value) and wrong in str(err.value) and "deleted" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == []


def test_http_error_names_the_status(tmp_path: Path, model_host: ModelHost) -> None:
    with pytest.raises(DownloadError, match="HTTP 404"):
        pull_model(model_host.url("missing.gguf"), tmp_path)
    assert not (tmp_path / "missing.gguf").exists()


def test_a_non_gguf_body_is_refused_and_deleted(tmp_path: Path, model_host: ModelHost) -> None:
    with pytest.raises(DownloadError, match="did not deliver a GGUF"):
        pull_model(model_host.url("page.gguf"), tmp_path)
    assert not (tmp_path / "page.gguf").exists() and not (tmp_path / "page.gguf.part").exists()


def test_an_existing_file_is_not_downloaded_again(tmp_path: Path, model_host: ModelHost) -> None:
    pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path)
    again = pull_model(model_host.url("tiny.Q4_0.gguf"), tmp_path, sha256=DIGEST)
    assert again.already_present and len(model_host.ranges) == 1


def test_non_http_url_and_nameless_url_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="models add"):
        pull_model("file:///etc/passwd", tmp_path)
    with pytest.raises(DownloadError, match="file name"):
        file_name_from_url("http://127.0.0.1:1/")


def test_pull_command_downloads_verifies_and_registers(tmp_path: Path, model_host: ModelHost,
                                                       run_cli: Callable[..., object],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    state = str(tmp_path / "state")
    result = run_cli("--state-dir", state, "models", "pull", model_host.url("tiny.Q4_0.gguf"),
                     "--sha256", DIGEST.upper(), "--id", "tiny")
    assert result.code == 0, result.err
    assert "registered as tiny" in result.out
    target = tmp_path / "cache" / "models" / "tiny.Q4_0.gguf"
    assert target.read_bytes() == PAYLOAD
    models = json.loads((tmp_path / "state" / "llamacpp" / "models.json").read_text())["models"]
    assert models == [{"id": "tiny", "path": str(target), "source": "pulled", "sha256": DIGEST,
                       "sizeBytes": len(PAYLOAD), "url": model_host.url("tiny.Q4_0.gguf")}]


def test_pull_command_checksum_mismatch_fails_cleanly(tmp_path: Path, model_host: ModelHost,
                                                      run_cli: Callable[..., object],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    result = run_cli("--state-dir", str(tmp_path / "state"), "models", "pull", model_host.url("tiny.Q4_0.gguf"),
                     "--sha256", "1" * 64)
    assert result.code == 2 and "was expected; it was deleted" in result.err
    leftovers = [p.name for p in (tmp_path / "cache" / "models").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == [] and not (tmp_path / "state" / "llamacpp" / "models.json").exists()


def test_pull_command_rejects_a_malformed_sha256(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    result = run_cli("--state-dir", str(tmp_path / "state"), "models", "pull", "http://127.0.0.1:9/x.gguf",
                     "--sha256", "abc")
    assert result.code == 2 and "not a sha256 digest" in result.err
