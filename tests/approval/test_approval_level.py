"""The standing level: persisted first then hot-applied, clamped, honoured at boot."""

from __future__ import annotations

import json

import pytest

from atomic_agent.api import approval_gate, create_runtime
from atomic_agent.approval.approval_gate import resolve_boot_level, set_approval_level
from atomic_agent.runtime.boot_context import boot
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from tests.approval.gate_kit import make_gate


def _level_on_disk(state) -> int:
    return json.loads((state / "config.json").read_text())["agent"]["approvalLevel"]


def test_set_level_persists_then_hot_applies(tmp_path) -> None:
    gate, _ = make_gate(1)
    assert set_approval_level(tmp_path, {}, gate, 3) == 3
    assert _level_on_disk(tmp_path) == 3 and gate.level == 3


def test_set_level_takes_the_digits_a_cli_passes(tmp_path) -> None:
    gate, _ = make_gate(2)
    set_approval_level(tmp_path, {}, gate, "4")
    assert _level_on_disk(tmp_path) == 4 == gate.level


@pytest.mark.parametrize("bad", [2.5, 4.0, True, "high", None, 9, 0, -1, "7", "4.5"])
def test_set_level_rejects_non_integers(tmp_path, bad) -> None:
    gate, _ = make_gate(2)
    with pytest.raises(ValueError, match="integer 1..5"):
        set_approval_level(tmp_path, {}, gate, bad)
    assert not (tmp_path / "config.json").exists() and gate.level == 2


def test_hot_apply_failure_names_the_rewritten_config_json(tmp_path) -> None:
    class BrokenGate:
        def set_level(self, level):
            raise RuntimeError("gate is gone")

    with pytest.raises(approval_gate.ApprovalLevelError) as err:
        set_approval_level(tmp_path, {}, BrokenGate(), 4)
    assert str(tmp_path / "config.json") in str(err.value) and "next start" in str(err.value)
    assert _level_on_disk(tmp_path) == 4  # persisted before the apply was tried


def test_no_approval_can_only_raise_to_full_trust() -> None:
    assert resolve_boot_level(True, 1) == 5 and resolve_boot_level(True, 3) == 5
    assert resolve_boot_level(False, 3) == 3
    with pytest.raises(ValueError, match="integer 1..5"):
        resolve_boot_level(False, 9)


async def test_persisted_level_is_honoured_at_boot(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"agent": {"approvalLevel": 3}}))
    runtime = await create_runtime(boot_context=boot(tmp_path, environ={}, host=fresh_plugin_host()))
    try:
        assert runtime.gate.level == 3
    finally:
        await runtime.close()


async def test_no_approval_raises_this_process_only_and_the_runtime_saves_a_new_level(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"agent": {"approvalLevel": 2}}))
    runtime = await create_runtime(boot_context=boot(tmp_path, environ={}, host=fresh_plugin_host()),
                                   no_approval=True)
    try:
        assert (runtime.gate.level, runtime.gate.level_name) == (5, "full trust")
        assert _level_on_disk(tmp_path) == 2  # --no-approval is never written down
        assert runtime.set_approval_level("3") == 3
        assert (_level_on_disk(tmp_path), runtime.gate.level_name) == (3, "home")
    finally:
        await runtime.close()
