"""A scripted stand-in for llama-server on a real loopback port, for sync and async tests alike.

It answers /health, /props, /v1/models, /slots, /tokenize and /completion (JSON and SSE) in the real
server's shapes, image requests on /v1/chat/completions (checked strictly, see fake_image_chat), emulates each slot's prompt cache so `timings.cache_n` behaves like the real
thing, and plays a script of replies and faults, one item per /completion request::

    with FakeLlamaServer(script=["[...]", HttpFault.grammar_error()], n_ctx=4096) as fake:
        ...  # talk to fake.base_url
        assert fake.completion_bodies[0]["id_slot"] == 0

Tokens are 4-character pieces of the text, so token counts are easy to predict in tests.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from http.server import ThreadingHTTPServer
from typing import Any

import attrs

from .fake_llama_handler import FakeLlamaHandler
from .fake_llama_script import (  # noqa: F401  (re-exported: tests import them from here)
    CHARS_PER_TOKEN,
    DEFAULT_REPLY,
    Delay,
    DropConnection,
    HttpFault,
    RecordedRequest,
    RefusedRequest,
    Reply,
    ScriptItem,
    Stall,
    common_prefix_length,
    fake_tokenize,
)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # the client gave up (a timeout under test): not the fake's failure
        super().handle_error(request, client_address)


@attrs.define
class _Slot:
    cached_text: str = ""  # prompt + generated text the slot's KV cache holds
    last_used: int = 0
    n_decoded: int = 0
    n_prompt: int = 0
    cache_n: int = 0


class FakeLlamaServer:
    """A threaded HTTP server on 127.0.0.1. `n_ctx` is the per-slot context reported by /props.

    Set `loading = True` to make every endpoint answer 503 "Loading model"; pass `props` to
    serve a /props body of your own instead of the generated one. `n_params` is the parameter
    count /v1/models reports in its meta (None: a meta without one, as some builds send); set
    `models_route = False` to answer /v1/models 404 like a build without the route.
    """

    def __init__(self, script: Iterable[ScriptItem] = (), *, n_ctx: int = 4096, total_slots: int = 2,
                 default_reply: ScriptItem = DEFAULT_REPLY, vision: bool = False,
                 model_alias: str = "fake-smollm2", chat_template: str = "{{ messages }}",
                 props: dict[str, Any] | None = None, n_params: int | None = None) -> None:
        if total_slots < 1 or n_ctx < 1:
            raise ValueError(f"FakeLlamaServer needs total_slots >= 1 and n_ctx >= 1, got {total_slots}, {n_ctx}")
        self.n_ctx = n_ctx
        self.total_slots = total_slots
        self.default_reply = default_reply
        self.vision = vision
        self.model_alias = model_alias
        self.chat_template = chat_template
        self.props_body = props
        self.n_params = n_params
        self.models_route = True
        # /v1/chat/completions image requests (fake_image_chat): the answer's text, and whether
        # thinking must be switched off in the request (llama-server adapter: yes)
        self.vision_reply = "a fake description"
        self.require_thinking_off = True
        self.loading = False
        self.requests: list[RecordedRequest] = []
        self._script: deque[ScriptItem] = deque(script)
        self._slots = [_Slot() for _ in range(total_slots)]
        self._clock = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeLlamaServer:
        handler = type("BoundFakeLlamaHandler", (FakeLlamaHandler,), {"fake": self})
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-llama-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> FakeLlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port; still readable after `stop()` so tests can assert on URLs."""
        if self._port is None:
            raise RuntimeError("FakeLlamaServer was never started; use it as a context manager or call start()")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # script and inspection ---------------------------------------------------------------

    def push(self, *items: ScriptItem) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(items)

    @property
    def remaining(self) -> int:
        return len(self._script)

    @property
    def completion_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every /completion request, in arrival order."""
        return [r.body for r in self.requests if r.path == "/completion"]

    def slot_text(self, slot: int) -> str:
        """What slot `slot`'s emulated prompt cache holds now."""
        return self._slots[slot].cached_text

    def _next_item(self) -> ScriptItem:
        with self._lock:
            return self._script.popleft() if self._script else self.default_reply

    # endpoints ---------------------------------------------------------------------------

    def props(self) -> dict[str, Any]:
        if self.props_body is not None:
            return self.props_body
        return {
            "default_generation_settings": {"params": {"seed": 4294967295, "temperature": 0.8, "top_k": 40,
                                                       "n_predict": -1, "stream": False}, "n_ctx": self.n_ctx},
            "total_slots": self.total_slots, "model_alias": self.model_alias, "model_path": "/models/fake.gguf",
            "modalities": {"vision": self.vision, "video": False, "audio": False},
            "endpoint_slots": True, "endpoint_props": False, "endpoint_metrics": False,
            "chat_template": self.chat_template, "bos_token": "<|im_start|>", "eos_token": "<|im_end|>",
            "build_info": "fake", "is_sleeping": False,
        }

    def models(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"vocab_type": 2, "n_vocab": 49152, "n_ctx_train": 8192, "n_embd": 576}
        if self.n_params is not None:
            meta["n_params"] = self.n_params
        return {"object": "list", "data": [{"id": self.model_alias, "object": "model", "created": 0,
                                            "owned_by": "llamacpp", "meta": meta}]}

    def slots(self) -> list[dict[str, Any]]:
        return [{"id": i, "n_ctx": self.n_ctx, "speculative": False, "is_processing": False, "id_task": s.last_used,
                 "n_prompt_tokens": s.n_prompt, "n_prompt_tokens_processed": s.n_prompt - s.cache_n,
                 "n_prompt_tokens_cache": s.cache_n, "params": {},
                 "next_token": [{"has_next_token": False, "has_new_line": False, "n_remain": -1,
                                 "n_decoded": s.n_decoded}]}
                for i, s in enumerate(self._slots)]

    def tokenize(self, body: dict[str, Any]) -> dict[str, Any]:
        text = str(body.get("content", ""))
        ids = fake_tokenize(text)
        if body.get("with_pieces"):
            pieces = [text[i:i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]
            return {"tokens": [{"id": t, "piece": p} for t, p in zip(ids, pieces, strict=True)]}
        return {"tokens": ids}

    def _pick_slot(self, requested: int, prompt: str) -> int:
        if requested != -1:
            return requested % self.total_slots  # the real server wraps out-of-range ids too
        best = max(range(self.total_slots), key=lambda i: (common_prefix_length(prompt, self._slots[i].cached_text), -i))
        if common_prefix_length(prompt, self._slots[best].cached_text) >= CHARS_PER_TOKEN:
            return best
        return min(range(self.total_slots), key=lambda i: (self._slots[i].last_used, i))

    def run_completion(self, body: dict[str, Any], reply: Reply) -> tuple[list[str], dict[str, Any]]:
        """Content pieces and the final result object for one completion, updating the slot cache.
        Raises `RefusedRequest` for requests the real server would reject."""
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            raise RefusedRequest(HttpFault(400, '"prompt" must be a string', "invalid_request_error"))
        n_prompt = len(fake_tokenize(prompt))
        if n_prompt > self.n_ctx:
            raise RefusedRequest(HttpFault.context_exceeded(n_prompt, self.n_ctx))
        content, stop_type, stopping_word = reply.content, "eos", ""
        for word in body.get("stop") or []:
            if isinstance(word, str) and word and word in content:
                content, stop_type, stopping_word = content[:content.index(word)], "word", word
                break
        pieces = [content[i:i + CHARS_PER_TOKEN] for i in range(0, len(content), CHARS_PER_TOKEN)]
        n_predict = int(body.get("n_predict", -1))
        if 0 <= n_predict < len(pieces):
            pieces, stop_type = pieces[:max(n_predict, 1)], "limit"
        truncated = reply.truncated
        if n_prompt + len(pieces) > self.n_ctx:
            pieces, stop_type, truncated = pieces[:self.n_ctx - n_prompt], "limit", True
        if reply.stop_type is not None:
            stop_type = reply.stop_type
        with self._lock:
            slot_id = self._pick_slot(int(body.get("id_slot", -1)), prompt)
            slot = self._slots[slot_id]
            # like llama-server, the last prompt token is always evaluated again
            reused = min(common_prefix_length(prompt, slot.cached_text) // CHARS_PER_TOKEN, max(n_prompt - 1, 0))
            cache_n = reused if body.get("cache_prompt", True) else 0
            text = "".join(pieces)
            self._clock += 1
            slot.cached_text, slot.last_used, slot.n_decoded = prompt + text, self._clock, len(pieces)
            slot.n_prompt, slot.cache_n = n_prompt, cache_n
        prompt_n = n_prompt - cache_n
        final = {
            "index": 0, "content": text, "tokens": [], "id_slot": slot_id, "stop": True, "model": self.model_alias,
            "tokens_predicted": len(pieces), "tokens_evaluated": n_prompt,
            "generation_settings": {"n_predict": n_predict, "seed": body.get("seed", 4294967295),
                                    "temperature": body.get("temperature", 0.8), "grammar": body.get("grammar", ""),
                                    "stop": body.get("stop", [])},
            "prompt": prompt, "has_new_line": "\n" in text, "truncated": truncated, "stop_type": stop_type,
            "stopping_word": stopping_word, "tokens_cached": max(n_prompt + len(pieces) - 1, 0),
            "timings": {"cache_n": cache_n, "prompt_n": prompt_n, "prompt_ms": float(prompt_n),
                        "prompt_per_token_ms": 1.0, "prompt_per_second": 1000.0, "predicted_n": len(pieces),
                        "predicted_ms": 10.0 * len(pieces), "predicted_per_token_ms": 10.0,
                        "predicted_per_second": 100.0},
        }
        return pieces, final
