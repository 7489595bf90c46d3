"""What the TUI's Memory panel shows, and the only code of the panel that touches the runtime.

Read-only by design: profile facts (with each key's history), notes (with their links),
links, and the status channel (per-phase switches, hybrid recall's embedding coverage). A
state dir without memory.sqlite shows empty lists and the file is not created. Nothing
here changes what is remembered and nothing imports Textual; the one long job it offers is
`reembed`, which rebuilds hybrid recall's vectors (derived data) with the current model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory_embeddings.embeddings_contract import EMBEDDINGS_SERVICE, HybridRecall

from .memory_contract import MEMORY_SERVICE, MEMORY_VIEWS_SERVICE, Memory

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

CHANNELS = ("profile", "notes", "links", "status")
LIST_LIMIT = 500
PREVIEW_CHARS = 70


@attrs.frozen
class MemoryRow:
    key: str  # what detail() takes back: a profile key, a note id, a link "from>to>kind", a status line
    cells: tuple[str, ...]


COLUMNS = {"profile": ("key", "value", "pinned", "versions", "source"),
           "notes": ("id", "content", "tags", "scope", "source"),
           "links": ("from", "kind", "to", "weight", "source"),
           "status": ("what", "state", "settings")}


def _preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class MemoryPanelOrchestrator:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime

    @property
    def views(self) -> Any:
        return self.runtime.service(MEMORY_VIEWS_SERVICE)

    @property
    def memory(self) -> Memory:
        return self.runtime.service(MEMORY_SERVICE)

    def _has_database(self) -> bool:
        return bool(self.memory.path.exists())

    def rows(self, channel: str, only: list[int] | None = None) -> list[MemoryRow]:
        """The channel's rows (for notes, `only` these ids, in this order); MemoryStoreError
        when memory.sqlite cannot be read."""
        if channel == "status":
            return self._status_rows()
        if not self._has_database():
            return []
        if channel == "profile":
            store = self.memory.profile_store()
            versions: dict[str, int] = {}
            for fact in store.all_rows():
                versions[fact.key] = versions.get(fact.key, 0) + 1
            return [MemoryRow(f.key, (f.key, _preview(f.value), "yes" if f.pinned else "no", str(versions[f.key]),
                                      f.source)) for f in store.list()]
        if channel == "notes":
            notes = list(reversed(self.memory.note_store().all_notes()))[:LIST_LIMIT]  # newest first
            if only is not None:
                by_id = {n.id: n for n in self.memory.note_store().all_notes()}
                notes = [by_id[i] for i in only if i in by_id]
            return [MemoryRow(str(n.id), (str(n.id), _preview(n.content), ", ".join(n.tags), n.scope, n.source))
                    for n in notes]
        if channel == "links":
            return [MemoryRow(f"{link.from_id}>{link.to_id}>{link.kind}",
                              (f"#{link.from_id}", link.kind, f"#{link.to_id}", f"{link.weight:g}", link.source))
                    for link in self.memory.link_store().all_links(limit=LIST_LIMIT)]
        raise ValueError(f"unknown memory channel {channel!r}; one of {', '.join(CHANNELS)}")

    def _status_rows(self) -> list[MemoryRow]:
        rows = [MemoryRow(f"phase:{p['block']}", (p["phase"], p["state"],
                                                  ", ".join(f"{k}={v}" for k, v in p["settings"].items())))
                for p in self.views.phases()]
        emb = self.views.embeddings()
        if not emb.get("installed"):
            rows.append(MemoryRow("embeddings", ("hybrid recall (embeddings)", "not installed", "")))
        else:
            coverage = f"{emb.get('embedded', 0)} of {emb.get('notes', 0)} notes embedded, {emb.get('pending', 0)} pending"
            model = emb.get("model") or "no model yet"
            rows.append(MemoryRow("embeddings", ("hybrid recall (embeddings)", "on" if emb.get("enabled") else "off",
                                                 f"{model}; {coverage}")))
        return rows

    def reembed_refusal(self) -> str | None:
        """Why re-embedding cannot start here (with what to do), or None when it can."""
        emb = self.views.embeddings()
        if not emb.get("installed"):
            return "Hybrid recall (the memory_embeddings plugin) is not installed: there are no vectors to rebuild."
        hybrid = self.runtime.service(EMBEDDINGS_SERVICE, None)
        if not emb.get("enabled") or hybrid is None:
            return ("Hybrid recall is off: `atomic-agent config set memoryEmbeddings.enabled true`, then restart the "
                    "TUI to re-embed.")
        if not self._has_database():
            return "No memory yet: there are no notes to embed."
        return None

    async def reembed(self, on_progress: Callable[[int, int], None]) -> str:
        """Every note embedded again with the current model; the outcome in words.
        ValueError (what to do) when it cannot start; EmbeddingUnavailable without a source."""
        refusal = self.reembed_refusal()
        if refusal is not None:
            raise ValueError(refusal)
        hybrid: HybridRecall = self.runtime.service(EMBEDDINGS_SERVICE)
        written = await hybrid.reembed(False, on_progress)
        emb = self.views.embeddings()
        pending = int(emb.get("pending", 0))
        said = f"Re-embedded {written} note(s) with {emb.get('model') or 'the embedding model'}"
        if pending:
            failure = emb.get("lastFailure") or {}
            return (f"{said}; {pending} could not be embedded ({failure.get('detail', 'see the status channel')}): "
                    "they are retried after the next turn")
        return f"{said}."

    def neighbourhood(self, note_id: int) -> list[int]:
        """The note and the notes its links reach (both directions, up to the links phase's
        depth, nearest first), as recall's link expansion would find them."""
        block = self.runtime.config.blocks.get("memoryLinks")
        depth = int(getattr(block, "expansion_depth", 2))
        limit = int(getattr(block, "max_expanded", 12))
        return [note_id, *self.memory.link_store().expand([note_id], depth=depth, max_expanded=limit)]

    def empty_hint(self, channel: str) -> str:
        if channel != "status" and not self._has_database():
            return "No memory yet: memory.sqlite does not exist (it is made when the agent first remembers)."
        return f"No {channel} in memory."

    def detail(self, channel: str, key: str) -> str:
        if channel == "profile":
            return self._profile_detail(key)
        if channel == "notes":
            return self._note_detail(int(key))
        if channel == "links":
            from_id, to_id, kind = key.split(">")
            return "\n\n".join([f"{kind}: #{from_id} -> #{to_id}", self._note_detail(int(from_id), links=False),
                                self._note_detail(int(to_id), links=False)])
        if key == "embeddings":
            emb = self.views.embeddings()
            return "\n".join(f"{k}: {v}" for k, v in emb.items())
        phase = next((p for p in self.views.phases() if f"phase:{p['block']}" == key), None)
        if phase is None:
            return f"{key}: not declared any more"
        return "\n".join([f"{phase['phase']} ({phase['block']}): {phase['state']}"]
                         + [f"  {k}: {v}" for k, v in phase["settings"].items()])

    def _profile_detail(self, key: str) -> str:
        history = self.memory.profile_store().history(key)
        if not history:
            return f"{key}: no such profile fact"
        lines = [f"profile fact {key} — {len(history)} version(s), oldest first:"]
        for fact in history:
            state = "active" if fact.superseded_by is None else f"superseded by #{fact.superseded_by}"
            lines.append(f"  #{fact.id} [{state}] {fact.value} (source {fact.source}"
                         + (", pinned" if fact.pinned else "") + ")")
        return "\n".join(lines)

    def _note_detail(self, note_id: int, links: bool = True) -> str:
        view = self.views.links(note_id)
        if view is None:
            return f"note #{note_id}: not in memory"
        note = view["note"]
        lines = [f"note #{note_id} [{note.get('scope', '')}] tags: {', '.join(note.get('tags', [])) or '-'}",
                 str(note.get("content", ""))]
        if links:
            lines.append(f"links ({len(view['links'])}):" if view["links"] else "links: none")
            for edge in view["links"]:
                other = edge["other"]
                arrow = "->" if edge["direction"] == "out" else "<-"
                preview = "(deleted)" if other is None else _preview(other["content"], 60)
                lines.append(f"  {arrow} {edge['kind']} #{edge['to'] if edge['direction'] == 'out' else edge['from']}"
                             f" {preview}")
        return "\n".join(lines)

