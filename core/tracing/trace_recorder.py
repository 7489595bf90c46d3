"""Append one JSON line per trace event to a session's NDJSON file, up to a byte cap."""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from atomic_agent.config.app_config import TracingConfig
from atomic_agent.tracing.trace_events import ENVELOPE_KEYS, FORBIDDEN_PROMPT_FIELD, PROMPT_CAPTURED, TRACE_TRUNCATED
from atomic_agent.tracing.trace_paths import trace_path, validate_session_id

# The runtime's trace recorders: one per session, with a bounded number of open files.
#
# A recorder opens its file on first use and keeps the descriptor; handing out a fresh recorder
# per call leaked one descriptor per turn, so a long-running server ran out of them. Here each
# session keeps one recorder, at most `max_open` are kept (the least recently used is closed
# and forgotten; a later event of its session gets a recorder that resumes its seq from the
# file), and `close_all` releases every one at shutdown. Forgetting matters as much as closing:
# a server that starts a session per request kept one recorder object per session for ever
# (RSS used to grow with every request). A forgotten recorder a running turn still holds
# stays reachable through a weak map, so one session never has two recorders at once.

DEFAULT_MAX_OPEN = 64


class TraceRecorders:
    def __init__(self, state_dir: Path, config: Callable[[], TracingConfig], max_open: int = DEFAULT_MAX_OPEN) -> None:
        self.state_dir = state_dir
        self._config = config
        self.max_open = max_open
        self._recorders: OrderedDict[str, TraceRecorder] = OrderedDict()  # most recently used last
        self._evicted: weakref.WeakValueDictionary[str, TraceRecorder] = weakref.WeakValueDictionary()

    def for_session(self, session_id: str) -> TraceRecorder:
        cfg = self._config()
        recorder = self._recorders.pop(session_id, None) or self._evicted.pop(session_id, None)
        if recorder is None or (recorder.max_bytes, recorder.enabled) != (cfg.max_bytes_per_session, cfg.enabled):
            if recorder is not None:
                recorder.close()  # the tracing config changed (hot reload): a recorder with the new limits
            recorder = TraceRecorder.for_session(self.state_dir, session_id, max_bytes=cfg.max_bytes_per_session,
                                                 enabled=cfg.enabled)
        self._recorders[session_id] = recorder
        while len(self._recorders) > self.max_open:
            older_id, older = self._recorders.popitem(last=False)
            older.close()  # a turn still holding it reopens the file on its next event
            self._evicted[older_id] = older  # weak: gone once no running turn holds it
        return recorder

    def open_files(self) -> int:
        return sum(1 for r in self._recorders.values() if r.is_open)

    def close_all(self) -> None:
        for recorder in self._recorders.values():
            recorder.close()


DEFAULT_MAX_BYTES = 10 * 1024 * 1024
_TAIL_PROBE_BYTES = 64 * 1024

log = logging.getLogger(__name__)


class TraceRecorder:
    """Writes `{"seq", "ts", "type", "sessionId", **fields}` lines to `path`, never rewriting one.

    `seq` starts at 0 and resumes after the last readable line of an existing file, so a
    restarted process continues the same sequence. When a line would take the file past
    `max_bytes`, one `trace_truncated` line is written and every later event is dropped.
    A write failure is logged once and disables the recorder: a trace never stops a run.
    """

    def __init__(self, path: Path, session_id: str, max_bytes: int = DEFAULT_MAX_BYTES,
                 enabled: bool = True) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes}")
        self.path = Path(path)
        self.session_id = validate_session_id(session_id)
        self.max_bytes = max_bytes
        self.enabled = enabled
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._next_seq = 0
        self._size = 0
        self._truncated = False
        self._needs_newline = False

    @classmethod
    def for_session(cls, state_dir: Path, session_id: str, max_bytes: int = DEFAULT_MAX_BYTES,
                    enabled: bool = True) -> TraceRecorder:
        """The recorder of `<state_dir>/traces/<session_id>.ndjson`."""
        return cls(trace_path(state_dir, session_id), session_id, max_bytes, enabled)

    @property
    def truncated(self) -> bool:
        """True once the cap was hit (in this process or a previous one)."""
        self._resume_if_enabled()
        return self._truncated

    @property
    def next_seq(self) -> int:
        """The seq the next event gets (resumed from an existing file)."""
        self._resume_if_enabled()
        return self._next_seq

    def _resume_if_enabled(self) -> None:
        if self.enabled:
            with self._lock:
                self._open()

    def record(self, event_type: str, **fields: Any) -> None:
        """Append one event; a no-op when disabled, failed, or past the cap."""
        if not event_type or not isinstance(event_type, str):
            raise ValueError(f"event_type must be a non-empty string, got {event_type!r}")
        clash = ENVELOPE_KEYS.intersection(fields)
        if clash:
            raise ValueError(f"trace fields {sorted(clash)} are set by the recorder; rename them")
        if event_type == PROMPT_CAPTURED and FORBIDDEN_PROMPT_FIELD in fields:
            raise ValueError("prompt_captured must not carry the stable prefix; pass its salted "
                             "hash as stablePrefixHash (see prompt_captured_fields)")
        if not self.enabled:
            return
        with self._lock:
            if not self._open() or self._truncated:
                return
            line = self._encode(event_type, fields)
            if self._size + len(line) > self.max_bytes:
                marker = self._encode(TRACE_TRUNCATED, {"maxBytes": self.max_bytes, "droppedType": event_type})
                self._write(marker)
                self._truncated = True
                return
            self._write(line)

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def close(self) -> None:
        """Release the file; a later event reopens it and resumes the seq from the file."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> TraceRecorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open(self) -> bool:
        """Open for append on first use and pick up seq/size/truncation from the file."""
        if self._fd is not None:
            return True
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # traces hold prompts and tool output: private to the user
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._resume()
        except OSError as exc:
            self._disable(exc)
            return False
        return True

    def _resume(self) -> None:
        size = os.fstat(self._fd).st_size  # type: ignore[arg-type]
        self._size = size
        if size == 0:
            return
        last_byte, last_event = _read_last_event(self.path, size)
        # a crash mid-write leaves a partial last line; end it so the next line stands alone
        self._needs_newline = last_byte != b"\n"
        if last_event is not None:
            seq = last_event.get("seq")
            if isinstance(seq, int) and not isinstance(seq, bool):
                self._next_seq = seq + 1
            self._truncated = last_event.get("type") == TRACE_TRUNCATED

    def _encode(self, event_type: str, fields: dict[str, Any]) -> bytes:
        event = {"seq": self._next_seq, "ts": _utc_now(), "type": event_type,
                 "sessionId": self.session_id, **fields}
        try:
            text = json.dumps(event, ensure_ascii=False, allow_nan=False, default=str,
                              separators=(",", ":"))
            data = text.encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError):
            # odd keys, NaN, lone surrogates, bytes: clean the whole event, then encode
            text = json.dumps(_clean(event), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            data = text.encode("utf-8")
        prefix = b"\n" if self._needs_newline else b""
        return prefix + data + b"\n"

    def _write(self, line: bytes) -> None:
        try:
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)  # type: ignore[arg-type]
                view = view[written:]
        except OSError as exc:
            self._disable(exc)
            return
        # unbuffered os.write: the line is visible to `trace show` as soon as this returns
        self._size += len(line)
        self._next_seq += 1
        self._needs_newline = False

    def _disable(self, exc: OSError) -> None:
        log.warning("tracing disabled for session %s: cannot write %s (%s)", self.session_id, self.path, exc)
        self.enabled = False
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _clean(value: Any) -> Any:
    """A JSON-safe copy: text with invalid UTF-8 replaced, non-JSON values stringified."""
    if isinstance(value, str):
        return value.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {_clean(k if isinstance(k, str) else str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return _clean(str(value))


def _read_last_event(path: Path, size: int) -> tuple[bytes, dict[str, Any] | None]:
    """The file's last byte and its last line that parses as a JSON object (None if none)."""
    with path.open("rb") as handle:
        handle.seek(size - 1)
        last_byte = handle.read(1)
        probe = _TAIL_PROBE_BYTES
        while True:
            start = max(0, size - probe)
            handle.seek(start)
            chunk = handle.read(size - start)
            lines = chunk.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first piece may be the middle of a line
            for raw in reversed(lines):
                event = _parse_line(raw)
                if event is not None:
                    return last_byte, event
            if start == 0:
                return last_byte, None
            probe *= 4


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        event = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
