"""What the simulated users do, drawn from a seeded RNG: sends, steers, stops, cancels, compactions."""

from __future__ import annotations

import random

import attrs

SEND, STEER, STOP, CANCEL, COMPACT = "send", "steer", "stop", "cancel", "compact"


@attrs.frozen
class Op:
    kind: str
    session: int  # index into the world's sessions
    text: str = ""
    gap: int = 0  # event-loop turns to let pass before the next op


@attrs.frozen
class Mix:
    sessions: int = 2
    messages: tuple[int, int] = (3, 6)  # sends per run, inclusive range
    steer: float = 0.3  # chance that a send is followed by a steer on the same session
    stop: float = 0.0
    cancel: float = 0.0
    compact: float = 0.0
    max_gap: int = 12
    abort: float = 0.0  # chance that a send's own event callback aborts it (chaos_driver.StreamAbort)


def workload(rng: random.Random, mix: Mix) -> list[Op]:
    ops: list[Op] = []
    steers = [0] * mix.sessions
    for n in range(rng.randint(*mix.messages)):
        s = rng.randrange(mix.sessions)
        ops.append(Op(SEND, s, f"msg-{s}-{n}", rng.randint(0, mix.max_gap)))
        if rng.random() < mix.steer:
            ops.append(Op(STEER, s, f"steer-{s}-{steers[s]}", rng.randint(0, mix.max_gap)))
            steers[s] += 1
        for kind, p in ((STOP, mix.stop), (CANCEL, mix.cancel), (COMPACT, mix.compact)):
            if rng.random() < p:
                ops.append(Op(kind, rng.randrange(mix.sessions), gap=rng.randint(0, mix.max_gap)))
    return ops
