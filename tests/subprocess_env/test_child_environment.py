"""The filtered child environment: baseline kept, secrets dropped, declared names allowed."""

from __future__ import annotations

import pytest

from atomic_agent.api import child_environment
from atomic_agent.subprocess_env import SAFE_DEFAULT_PATH, is_allowed

AGENT_ENV = {
    "PATH": "/usr/bin:/bin", "HOME": "/home/u", "USER": "u", "LANG": "C.UTF-8", "LC_ALL": "C", "LC_CTYPE": "C",
    "TERM": "xterm", "TMPDIR": "/tmp", "XDG_RUNTIME_DIR": "/run/user/1", "XDG_CONFIG_HOME": "/home/u/.config",
    "OPENROUTER_API_KEY": "sk-or-secret", "TELEGRAM_BOT_TOKEN": "123:abc", "AWS_SECRET_ACCESS_KEY": "aws",
    "GITHUB_TOKEN": "ghp_x", "HTTP_PROXY": "http://user:pw@proxy:3128", "SSL_CERT_FILE": "/etc/ssl/ca.pem",
}


def test_baseline_variables_pass_the_filter() -> None:
    env = child_environment(environ=AGENT_ENV)
    for name in ("PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "XDG_RUNTIME_DIR",
                 "XDG_CONFIG_HOME", "SSL_CERT_FILE"):
        assert env[name] == AGENT_ENV[name]


def test_secrets_loaded_from_dotenv_do_not_reach_children() -> None:
    env = child_environment(environ=AGENT_ENV)
    for name in ("OPENROUTER_API_KEY", "TELEGRAM_BOT_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "HTTP_PROXY"):
        assert name not in env
    assert "sk-or-secret" not in env.values()


def test_declared_names_and_patterns_are_added_to_the_baseline() -> None:
    env = child_environment(["GITHUB_TOKEN", "AWS_*"], environ=AGENT_ENV)
    assert env["GITHUB_TOKEN"] == "ghp_x"
    assert env["AWS_SECRET_ACCESS_KEY"] == "aws"
    assert "OPENROUTER_API_KEY" not in env


def test_filter_switched_off_passes_everything_through() -> None:
    assert child_environment(environ=AGENT_ENV, enabled=False) == AGENT_ENV


def test_path_is_always_present_even_when_the_agent_has_none() -> None:
    assert child_environment(environ={"HOME": "/h"})["PATH"] == SAFE_DEFAULT_PATH


def test_pattern_matching_is_case_sensitive_like_posix() -> None:
    assert is_allowed("LC_TIME")
    assert not is_allowed("lc_time")
    assert not is_allowed("XDGX")


def test_a_blank_allowed_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        child_environment(["  "], environ=AGENT_ENV)


def test_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_TEST_SECRET_TOKEN", "leak")
    monkeypatch.setenv("LC_TEST_MARKER", "kept")
    env = child_environment()
    assert "ATOMIC_TEST_SECRET_TOKEN" not in env
    assert env["LC_TEST_MARKER"] == "kept"
