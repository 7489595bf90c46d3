"""The read path of the notes phase: `### memory-index` (memory slot) and `### recalled`
(recall slot), from the turn's prefetched snapshot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .note_lines import pointer_line

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

RECALLED = "recalled"
INDEX = "memory-index"
PHASE_ORDER = 20  # after the profile
LESSONS_KEY = "memoryLessons"  # the vote curation settings (this plugin's lessons block)


def notes_phase(runtime: RuntimeView, cfg: Any) -> Any:
    from atomic_agent.api import MemoryPhase, PromptSection, capped_lines, estimate_tokens

    from .note_store_factory import memory_of, note_store_for
    from .recall_extensions import RecallExtensions
    from .recall_prefetch import RecallPrefetch

    prefetch = RecallPrefetch(lambda: note_store_for(runtime, cfg), cfg, lambda: memory_of(runtime).metrics,
                              RecallExtensions(runtime),
                              lambda **settings: memory_of(runtime).QueryFeedback(**settings))

    voter: Any = None

    def voting() -> Any:
        """memoryLessons' vote settings (this plugin's own block), or None when outcome votes are off."""
        block = runtime.config.blocks.get(LESSONS_KEY)
        return block if block is not None and block.outcome_votes else None

    def votes() -> Any:
        nonlocal voter
        if voter is None:
            voter = memory_of(runtime).outcome_voter("note")
        return voter

    def before_turn(start: Any) -> None:
        if voting() is not None:
            votes().before_turn(start.session_id, start.turn_index)
        if memory_of(runtime).vector_recall is None:
            prefetch.prefetch(start.session_id, start.user_text, start.working_dir)

    async def prepare_turn(start: Any) -> None:
        vectors = memory_of(runtime).vector_recall  # set only by the memory_embeddings plugin
        if vectors is not None:  # the message's embedding is a round trip: awaited here
            await prefetch.prefetch_hybrid(start.session_id, start.user_text, start.working_dir, vectors)

    def sections(session_id: str, user_text: str) -> list[Any]:
        snap = prefetch.snapshot(session_id, user_text)
        out: list[Any] = []
        inject, index = cfg.recall_injection, cfg.index
        if snap.index:
            body = capped_lines([pointer_line(n, index.preview_chars) for n in snap.index], index.max_tokens,
                                estimate_tokens)
            out.append(PromptSection(INDEX, body, slot="memory", max_tokens=index.max_tokens, dedupe_key=INDEX,
                                     source="stored notes"))
        if snap.recalled:
            lines = [pointer_line(n, inject.preview_chars) for n in snap.recalled]
            body = capped_lines(lines, inject.max_tokens, estimate_tokens)
            if voting() is not None:  # the notes the turn was shown, voted on when it ends
                present = set(body.splitlines())
                votes().shown(session_id, [n.id for n, line in zip(snap.recalled, lines, strict=True)
                                           if line in present])
            out.append(PromptSection(RECALLED, body, slot="recall", max_tokens=inject.max_tokens,
                                     dedupe_key=RECALLED, source="stored notes"))
        return out

    async def after_turn(digest: Any) -> None:
        settings = voting()
        if settings is not None:
            votes().after_turn(digest, settings.max_vote)

    phase = MemoryPhase(name="memory-notes", order=PHASE_ORDER, sections=sections, before_turn=before_turn,
                        prepare_turn=prepare_turn, after_turn=after_turn)
    return phase
