"""Run callables at the same moment on separate threads (each with its own store object, as
two processes would) and collect what each returned."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def race(*contenders: Callable[[], Any]) -> list[Any]:
    barrier = threading.Barrier(len(contenders))
    results: list[Any] = [None] * len(contenders)
    errors: list[BaseException] = []

    def run(i: int, fn: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = fn()
        except BaseException as exc:  # re-raised on the test's thread below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(contenders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    if errors:
        raise errors[0]
    return results
