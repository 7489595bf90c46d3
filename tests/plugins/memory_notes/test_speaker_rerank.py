"""Speaker-aware recall moves the named speaker's hits up, keeps each speaker's own order,
and leaves hits without speakers (every note the agent writes today) exactly as they were."""

from __future__ import annotations

from types import SimpleNamespace

from atomic_agent.plugins.memory_notes.speaker_rerank import speaker_rerank


def hit(note_id: int, speaker: str | None) -> SimpleNamespace:
    meta = {"speaker": speaker} if speaker else None
    return SimpleNamespace(note=SimpleNamespace(id=note_id, meta=meta))


def ids(hits: list[SimpleNamespace]) -> list[int]:
    return [h.note.id for h in hits]


def test_the_named_speakers_hits_move_up_in_their_own_order() -> None:
    hits = [hit(1, "Melanie"), hit(2, "Caroline"), hit(3, "Melanie"), hit(4, "Caroline")]
    assert ids(speaker_rerank(hits, "What did Caroline research?")) == [2, 4, 1, 3]
    assert ids(speaker_rerank(hits, "What did Caroline research?", boost=0.02)) == [2, 1, 4, 3]  # rank still counts


def test_no_speaker_or_two_named_speakers_change_nothing() -> None:
    plain = [hit(i, None) for i in range(5)]
    assert speaker_rerank(plain, "what did caroline say") == plain
    both = [hit(1, "Melanie"), hit(2, "Caroline")]
    assert ids(speaker_rerank(both, "did Caroline and Melanie meet?")) == [1, 2]
    assert ids(speaker_rerank(both, "where is the deploy script?")) == [1, 2]
