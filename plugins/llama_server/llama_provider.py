"""The llama-server text provider: grammar transport, per-session slots, n_ctx from /props."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import Completion, CompletionRequest, ProviderCapabilities, ProviderError

from .slot_leases import SlotLeases
from .slot_manager import SlotManager

if TYPE_CHECKING:
    from pathlib import Path

    from atomic_agent.api import RuntimeView

    from .llama_client import LlamaServerClient, ServerProps

MODES = ("managed", "external")
DEFAULTS: dict[str, Any] = {"retries": 3, "backoffMs": 150, "timeoutS": 120, "maxTokens": 512, "slotWaitS": 10}


class LlamaServerProvider:
    """A `TextProvider` over one llama-server. Server facts (n_ctx, slots, modalities) are read
    from /props once and cached; `refresh()` re-reads them, and a completion that lost its
    connection (the server stopped or restarted mid-turn) makes the next one re-read them first,
    so a restart with another `--parallel` never leaves requests pinned to slots that are gone.

    Slots come from a `SlotManager` built from /props `total_slots`: each session keeps one
    main slot, the last slot is kept for reflection. Until /props has been read, `slot_for`
    answers -1 without recording anything, so a session's fixed slot is only chosen once the
    real slot count is known.

    Other processes on the machine use the same server, so a completion pins its slot only
    while it holds that slot's cross-process lease (`SlotLeases`, in `lease_bases`); without
    `lease_bases` (an embedder's bare provider) requests pin slots as the SlotManager says.
    """

    def __init__(self, url: str, mode: str, *, retries: int = 3, backoff_ms: int = 150, timeout_s: float = 120,
                 max_tokens: int = 512, client: LlamaServerClient | None = None,
                 lease_bases: tuple[Path, ...] = (), slot_wait_s: float = 10.0) -> None:
        if mode not in MODES:
            raise ValueError(f"llama-server mode {mode!r} is not one of {', '.join(MODES)}")
        if client is None:
            from .llama_client import LlamaServerClient

            client = LlamaServerClient(url, retries=retries, backoff_ms=backoff_ms, timeout_s=timeout_s)
        self.url = url
        self.mode = mode
        self.max_tokens = max_tokens
        self.temperature = 0.2  # what the prompt plan samples with; llama.temperature sets it
        self.client = client
        self._props: ServerProps | None = None
        self._meta: dict[str, Any] | None = None  # /v1/models meta (n_params); None: not read yet
        self._props_lock = asyncio.Lock()
        self._slots: SlotManager | None = None
        self._props_stale = False  # a completion lost its connection: the server may have restarted
        self.leases = SlotLeases(url, lease_bases, wait_s=slot_wait_s) if lease_bases else None

    @property
    def capabilities(self) -> ProviderCapabilities:
        # vision is only known once /props has been read; until then it is reported off
        vision = bool(self._props and self._props.vision)
        return ProviderCapabilities(transport="grammar", slot_affinity=True, vision=vision, embeddings=False)

    async def props(self) -> ServerProps:
        """The cached /props answer, fetched on first use."""
        async with self._props_lock:
            return self._props if self._props is not None else self._adopt(await self.client.props())

    async def refresh(self) -> ServerProps:
        """Re-read /props (the server may have been restarted with another -c or --parallel)."""
        async with self._props_lock:
            return self._adopt(await self.client.props())

    def _adopt(self, props: ServerProps) -> ServerProps:
        # a changed slot count invalidates every assignment; an unchanged one keeps them
        if self._slots is None or self._slots.total_slots != props.total_slots:
            self._slots = SlotManager(props.total_slots)
        self._props = props
        self._meta = None  # the server may have been restarted with another model
        return props

    def slot_for(self, session_id: str) -> int:
        """The session's main slot, stable from its first step on; -1 while /props is unknown."""
        return self._slots.main_slot(session_id) if self._slots is not None else -1

    def reflection_slot(self) -> int:
        """The slot reserved for reflection and other background calls (-1 with a single slot)."""
        return self._slots.reflection_slot() if self._slots is not None else -1

    def release_slot(self, session_id: str) -> None:
        if self._slots is not None:
            self._slots.release(session_id)

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        if self._props_stale:
            before = self._props
            await self.refresh()  # raises while the server is still down; the flag stays set
            self._props_stale = False
            if before is not None and self._props is not None and not -1 <= request.slot_id < self._props.total_slots:
                # the slot was chosen from the old server's slot count; the next step chooses anew
                request = attrs.evolve(request, slot_id=-1)
        try:
            return await self._complete(request, on_delta)
        except ProviderError as exc:
            if exc.status is None and not exc.timed_out:
                self._props_stale = True
            raise

    async def _complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None) -> Completion:
        if self._props is not None and not -1 <= request.slot_id < self._props.total_slots:
            # the server would wrap the id onto another session's slot and evict its cache
            raise ValueError(f"slot id {request.slot_id} is outside this llama-server's slots "
                             f"(-1..{self._props.total_slots - 1}); take slot ids from the SlotManager")
        if self.leases is None or self._props is None or self._slots is None or request.slot_id < 0:
            return await self.client.complete(self._capped(request), on_delta)
        lease = await self.leases.take(request.slot_id, self._props.total_slots, self._slots.reflection_slot())
        try:
            if lease.slot != request.slot_id:
                request = attrs.evolve(request, slot_id=lease.slot)
            return await self.client.complete(self._capped(request), on_delta)
        finally:
            lease.release()

    def _capped(self, request: CompletionRequest) -> CompletionRequest:
        if self.max_tokens <= 0:
            return request
        if request.n_predict < 0 or request.n_predict > self.max_tokens:
            return attrs.evolve(request, n_predict=self.max_tokens)
        return request

    async def context_window(self) -> int | None:
        try:
            return (await self.props()).n_ctx
        except ProviderError:
            return None

    async def total_slots(self) -> int:
        try:
            return (await self.props()).total_slots
        except ProviderError:
            return 1

    async def count_tokens(self, text: str) -> int | None:
        try:
            return len(await self.client.tokenize(text))
        except ProviderError:
            return None

    async def describe(self) -> dict[str, object]:
        try:
            props = await self.props()
        except ProviderError:
            return {"chat_template": "", "model_alias": "", "modalities": {}, "reachable": False}
        facts: dict[str, object] = {"chat_template": props.chat_template, "model_alias": props.model_alias,
                                    "modalities": {**props.modalities, "vision": props.vision},
                                    "vision_source": props.vision_source, "model_path": props.model_path,
                                    "n_ctx": props.n_ctx, "total_slots": props.total_slots, "reachable": True}
        n_params = (await self._model_meta()).get("n_params")
        if isinstance(n_params, int) and not isinstance(n_params, bool) and n_params > 0:
            facts["n_params"] = n_params  # the prompt style's `auto` reads it (prompt_style.py)
        return facts

    async def _model_meta(self) -> dict[str, Any]:
        """/v1/models' meta for the loaded model, read once per /props read ({} if the server has none)."""
        if self._meta is None:
            try:
                self._meta = await self.client.model_meta()
            except ProviderError:
                self._meta = {}
        return self._meta

    # -- the optional vision capability (plugins/vision/vision_contract.py ImageDescriber) ----------
    async def vision_support(self, refresh: bool = False) -> tuple[bool, str]:
        """Read from /props at call time: a server restarted with or without `--mmproj` is
        seen on the next call that refreshes (the tool refreshes before refusing)."""
        props = await (self.refresh() if refresh else self.props())
        return props.vision, props.vision_source

    async def describe_images(self, prompt: str, images: Sequence[tuple[str, bytes]], *, max_images: int,
                              max_tokens: int = 512, assume_vision: bool = False) -> str:
        """Ask the loaded model about `images` on /v1/chat/completions, which picks its own slot:
        no slot id is sent, so no session's main slot and not the reflection slot is used."""
        from .image_chat import CHAT_PATH, answer_text, image_chat_body

        if not images:
            raise ValueError("no image to describe")
        if len(images) > max_images:
            raise ValueError(f"{len(images)} images in one call; at most {max_images} (vision.maxImagesPerCall)")
        if not assume_vision:
            supported, _source = await self.vision_support()
            if not supported:
                raise ProviderError(
                    f"the model on llama-server {self.url} cannot see images (no vision in /props); start it with "
                    "a projector: `atomic-agent models add MODEL.gguf --mmproj MMPROJ.gguf`, then `atomic-agent "
                    "llama start`", url=self.url, error_type="vision_unsupported")
        body = image_chat_body(prompt, images, min(max_tokens, self.max_tokens) if self.max_tokens > 0 else max_tokens)
        return answer_text(await self.client.chat(body), self.url + CHAT_PATH)

    async def health(self) -> bool:
        return await self.client.health()

    def unavailable_hint(self) -> str:
        if self.mode == "managed":
            return f"The managed llama-server at {self.url} is not running; start it with `atomic-agent llama start`."
        return (f"No llama-server answered at {self.url}; start it, or point `llama.url` in the config "
                "(or the ATOMIC_AGENT_LLAMA_URL environment variable) at a running server.")

    async def close(self) -> None:
        await self.client.aclose()


def build_llama_provider(entry: dict[str, Any], runtime: RuntimeView | None) -> LlamaServerProvider:
    """Provider factory for the `llama-server` kind. `entry` holds url, mode, retries,
    backoffMs, timeoutS, maxTokens and slotWaitS; the slot leases live in the per-user cache,
    else in the runtime's state dir."""
    url = entry.get("url")
    if not isinstance(url, str) or not url:
        raise ValueError("the llama-server provider entry needs a `url` such as http://127.0.0.1:8080 "
                         "(set llama.url or ATOMIC_AGENT_LLAMA_URL)")
    values = {**DEFAULTS, **{k: v for k, v in entry.items() if k in DEFAULTS and v is not None}}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"llama-server provider entry `{key}` must be a number, got {value!r}")
    from atomic_agent.api import resolve_cache_dir

    return LlamaServerProvider(url, str(entry.get("mode") or "external"), retries=int(values["retries"]),
                               backoff_ms=int(values["backoffMs"]), timeout_s=float(values["timeoutS"]),
                               max_tokens=int(values["maxTokens"]),
                               lease_bases=(resolve_cache_dir(),) + ((runtime.state_dir,) if runtime else ()),
                               slot_wait_s=float(values["slotWaitS"]))
