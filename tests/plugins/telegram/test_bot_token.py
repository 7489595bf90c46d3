"""The token lives in <state>/.env only (0600) and is scrubbed from every text."""

from __future__ import annotations

import os
import stat

import pytest

from atomic_agent.plugins.telegram.bot_token import (
    REDACTED,
    check_token_shape,
    clear_token,
    read_token,
    scrub,
    store_token,
)

from .fake_bot_api import TOKEN


def test_the_token_is_stored_0600_beside_other_keys_and_removed_alone(tmp_path) -> None:
    (tmp_path / ".env").write_text("OTHER=1\n# a comment\n")
    store_token(tmp_path, TOKEN)
    assert stat.S_IMODE(os.stat(tmp_path / ".env").st_mode) == 0o600
    assert read_token(tmp_path) == TOKEN
    assert clear_token(tmp_path)
    assert read_token(tmp_path) is None
    assert (tmp_path / ".env").read_text() == "OTHER=1\n# a comment\n"
    assert not clear_token(tmp_path)


def test_a_value_that_is_not_a_token_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError) as caught:
        check_token_shape("my secret password")
    assert "my secret password" not in str(caught.value)


def test_scrub_hides_the_token_and_token_shaped_strings() -> None:
    url = f"POST https://api.telegram.org/bot{TOKEN}/getUpdates failed"
    assert TOKEN not in scrub(url, TOKEN) and REDACTED in scrub(url, TOKEN)
    assert "98765:" not in scrub("old 98765:ABCDEFGHIJKLMNOPQRSTUVWXYZ_- token", None)
