"""LoopSettings: defaults, ATOMIC_AGENT_LOOP_* overrides, clamps, bad values."""

from __future__ import annotations

import logging

import pytest

from atomic_agent.agent.loop_detector import LOOP_ENV_VARS, LoopSettings, ToolLoopTracker


def test_defaults_match_the_guide() -> None:
    s = LoopSettings.from_env({})
    assert (s.warning_threshold, s.critical_threshold, s.breaker_veto_streak, s.history_size,
            s.wandering_threshold, s.wandering_escalation) == (3, 5, 3, 40, 6, 12)


def test_thresholds_env_configurable_and_clamped() -> None:
    env = {
        "ATOMIC_AGENT_LOOP_WARNING_THRESHOLD": "7",
        "ATOMIC_AGENT_LOOP_CRITICAL_THRESHOLD": "4",  # below warning: raised to 7
        "ATOMIC_AGENT_LOOP_BREAKER_VETO_STREAK": " 2 ",
        "ATOMIC_AGENT_LOOP_HISTORY_SIZE": "10",  # below escalation: raised to 20
        "ATOMIC_AGENT_LOOP_WANDERING_THRESHOLD": "20",
        "ATOMIC_AGENT_LOOP_WANDERING_ESCALATION": "15",  # below wandering: raised to 20
    }
    s = LoopSettings.from_env(env)
    assert s.warning_threshold == 7 and s.critical_threshold == 7
    assert s.breaker_veto_streak == 2
    assert s.wandering_threshold == 20 and s.wandering_escalation == 20
    assert s.history_size == 20


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "2.5"])
def test_invalid_env_values_fall_back_to_defaults(raw: str, caplog: pytest.LogCaptureFixture) -> None:
    env = dict.fromkeys(LOOP_ENV_VARS.values(), raw)
    with caplog.at_level(logging.WARNING):
        s = LoopSettings.from_env(env)
    assert s == LoopSettings()
    assert "ATOMIC_AGENT_LOOP_WARNING_THRESHOLD" in caplog.text


def test_empty_env_value_means_unset() -> None:
    assert LoopSettings.from_env({"ATOMIC_AGENT_LOOP_HISTORY_SIZE": ""}).history_size == 40


def test_tracker_clamps_directly_built_settings() -> None:
    tracker = ToolLoopTracker(LoopSettings(warning_threshold=4, critical_threshold=2,
                                           wandering_threshold=9, wandering_escalation=3, history_size=5))
    assert tracker.settings.critical_threshold == 4
    assert tracker.settings.wandering_escalation == 9
    assert tracker.settings.history_size == 9


def test_non_positive_settings_are_refused_with_the_field_name() -> None:
    with pytest.raises(ValueError, match="history_size"):
        LoopSettings(history_size=0)
