"""v2.5 A invariant 4: the heuristic gate is pure and covers the guide's languages."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.memory_rewriter.referential_gate import is_referential

REFERENTIAL = [
    "did they mention it?", "and the other one?", "what about that?", "But why did he leave the team so early?",
    "y eso?", "¿Y ellos qué dijeron sobre el viaje a Madrid?", "und das?", "Hat sie das wirklich so gesagt, gestern?",
    "et ça?", "Mais pourquoi ils ont changé le plan initial?", "e isso?", "e allora?", "en dat?", "a to?",
    "и что потом было с ним?", "А они что ответили на это письмо?", "peki onlar?", "ve bu ne zaman oldu acaba?",
    "وماذا عن ذلك؟", "ואז מה הוא אמר?", "और वह कब हुआ था?", "còn nó thì sao?", "dan mereka bilang apa tentang itu?",
    "그리고 그것은 언제 끝났어?", "thanks",
]
SELF_CONTAINED = [
    "What database does the billing service use in production?",
    "I moved to Lisbon last year with my wife and kids",
    "Wie heißt die Hauptstadt von Frankreich und Spanien heute?",
    "Quel est le port par défaut de Postgres en production?",
    "¿Cuál es la capital de Portugal y cuántos habitantes tiene?",
    "Какой порт по умолчанию у Postgres в продакшене сейчас?",
    "What is Kafka?", "", "   ",
]


@pytest.mark.parametrize("message", REFERENTIAL)
def test_referential_follow_ups_fire_the_gate(message: str) -> None:
    assert is_referential(message)


@pytest.mark.parametrize("message", SELF_CONTAINED)
def test_self_contained_messages_bypass_the_gate(message: str) -> None:
    assert not is_referential(message)


def test_gate_is_pure_the_same_input_gives_the_same_answer() -> None:
    answers = {m: is_referential(m) for m in REFERENTIAL + SELF_CONTAINED}
    for _ in range(3):
        assert {m: is_referential(m) for m in answers} == answers
