"""`atomic-agent doctor` for Telegram: read-only lines for a missing token, a readable
.env, no owner, and replies that may or may not have reached the phone."""

from __future__ import annotations

from atomic_agent.plugins.telegram.delivery_store import DeliveryStore
from atomic_agent.plugins.telegram.doctor_findings import telegram_findings

from .channel_harness import write_state


def by_check(state) -> dict:
    return {f.check: f for f in telegram_findings(state)}


def test_a_disabled_channel_has_nothing_to_say(tmp_path) -> None:
    assert telegram_findings(write_state(tmp_path / "s", None, enabled=False)) == []


def test_missing_token_readable_env_no_owner_and_uncertain_replies_are_reported(tmp_path) -> None:
    state = write_state(tmp_path / "s", None, owner=None, token=None)
    found = by_check(state)
    assert found["telegram token"].level == "error" and found["telegram owner"].level == "warn"
    (state / ".env").write_text("TELEGRAM_BOT_TOKEN=1234567:abcdefghijklmnopqrstuvwxyz\n")
    (state / ".env").chmod(0o644)
    store = DeliveryStore.of_state_dir(state, lambda: 1234567)
    record = store.record("reply", 1, "x", formatted=False)
    store.mark_attempting(record.id, 1)
    store.close()  # the process stopped mid-send: the next start settles it
    restarted = DeliveryStore.of_state_dir(state, lambda: 1234567)
    restarted.settle_interrupted()
    restarted.close()
    found = by_check(state)
    assert "telegram token" not in found
    assert found["telegram token file"].level == "error" and "644" in found["telegram token file"].detail
    assert found["telegram deliveries"].level == "warn" and found["telegram deliveries"].detail.startswith("1 ")
    assert "abcdefghijklmnopqrstuvwxyz" not in " ".join(f.detail + f.advice for f in found.values())
