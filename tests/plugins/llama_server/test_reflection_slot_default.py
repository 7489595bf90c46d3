"""A managed llama-server starts with a reflection slot by default: `llama.parallel 1`
still launches two slots unless `llama.reflectionSlot` is switched off."""

from __future__ import annotations

import attrs

from atomic_agent.plugins.llama_server.llama_config import LlamaConfig
from atomic_agent.plugins.llama_server.server_launch import launch_parallel
from atomic_agent.plugins.llama_server.slot_manager import SlotManager


def test_single_slot_config_still_gets_a_reflection_slot_by_default() -> None:
    cfg = attrs.evolve(LlamaConfig(), parallel=1)
    assert cfg.reflection_slot is True and launch_parallel(cfg) == 2
    slots = SlotManager(launch_parallel(cfg))
    assert slots.reflection_slot() == 1 and slots.main_slot("s") == 0


def test_switching_the_reflection_slot_off_keeps_parallel_as_given() -> None:
    cfg = attrs.evolve(LlamaConfig(), parallel=1, reflection_slot=False)
    assert launch_parallel(cfg) == 1 and SlotManager(1).reflection_slot() == -1
    assert launch_parallel(attrs.evolve(LlamaConfig(), parallel=4)) == 4
