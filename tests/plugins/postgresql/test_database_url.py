"""storage.url is parsed once, its password kept apart and never shown: not in `shown`, not
in repr, not in any message this plugin builds from a driver error."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.postgresql.database_url import StorageUrlError, is_postgres_url, parse_database_url

SECRET = "s3cr:et@pass"


def test_the_password_comes_from_the_env_file_variable_when_the_url_has_none():
    url = parse_database_url("postgresql://agent@db.internal:6543/atomic", {"ATOMIC_AGENT_STORAGE_PASSWORD": SECRET})
    assert (url.user, url.host, url.port, url.database, url.password) == ("agent", "db.internal", 6543, "atomic",
                                                                          SECRET)
    assert url.connect_kwargs(5)["password"] == SECRET


def test_a_password_in_the_url_is_used_but_never_shown():
    url = parse_database_url("postgresql://agent:s3cr%3Aet%40pass@db:5432/atomic", {})
    assert url.password == SECRET
    assert SECRET not in url.shown and SECRET not in repr(url) and "s3cr" not in url.shown
    leaked = f"connection to postgresql://agent:s3cr%3Aet%40pass@db:5432/atomic failed; password {SECRET}"
    scrubbed = url.scrub(leaked)
    assert "s3cr" not in scrubbed and "***" in scrubbed


@pytest.mark.parametrize(("url", "says"), [
    ("mysql://agent@db/atomic", "not a PostgreSQL URL"),
    ("postgresql://db/atomic", "lacks a user"),
    ("postgresql://agent@db", "lacks a database name"),
    ("postgresql://agent:hunter2@db:notaport/atomic", "not a valid URL"),
])
def test_a_malformed_url_is_refused_with_what_to_write_and_without_its_password(url: str, says: str):
    with pytest.raises(StorageUrlError, match=says) as refused:
        parse_database_url(url, {})
    assert "hunter2" not in str(refused.value) and "postgresql://agent@127.0.0.1:5432/atomic_agent" in str(refused.value)


def test_only_postgresql_schemes_select_the_backend():
    assert is_postgres_url("postgresql://a@b/c") and is_postgres_url("postgres://a@b/c")
    assert not is_postgres_url("") and not is_postgres_url("sqlite:///x") and not is_postgres_url("postgresql")
