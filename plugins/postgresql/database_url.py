"""A PostgreSQL URL as the plugin uses it: parsed once, its password kept apart (from the URL
or `ATOMIC_AGENT_STORAGE_PASSWORD`, which lives in `<state>/.env`) and never shown. Every
message of this plugin names the database by `shown`, and `scrub` removes the password from
any text a driver error might echo."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote, unquote, urlsplit

import attrs

from .storage_config import PASSWORD_ENV

SCHEMES = ("postgresql", "postgres")
_URL_PASSWORD = re.compile(r"([A-Za-z][\w+.-]*://[^:/@\s]*:)[^@\s]*@")  # user:password@ in any URL


class StorageUrlError(ValueError):
    """storage.url cannot be used; the message says what was wrong and how to write it."""


@attrs.frozen(repr=False)
class DatabaseUrl:
    user: str
    host: str
    port: int
    database: str
    password: str | None = attrs.field(default=None, eq=False)

    @property
    def shown(self) -> str:
        """The URL without its password: what messages and logs name."""
        return f"postgresql://{quote(self.user)}@{self.host}:{self.port}/{quote(self.database)}"

    def __repr__(self) -> str:
        return f"DatabaseUrl({self.shown})"

    def connect_kwargs(self, connect_timeout_s: int) -> dict[str, object]:
        """Keyword arguments for psycopg (the password passed as a value, never inside a URL string)."""
        kwargs: dict[str, object] = {"host": self.host, "port": self.port, "dbname": self.database,
                                     "user": self.user, "connect_timeout": connect_timeout_s,
                                     "application_name": "atomic-agent"}
        if self.password is not None:
            kwargs["password"] = self.password
        return kwargs

    def scrub(self, text: str) -> str:
        """`text` on one line, with this URL's password (and any password written inside a
        URL) removed."""
        text = _URL_PASSWORD.sub(r"\1***@", " ".join(text.split()))
        if self.password:
            text = text.replace(self.password, "***")
            text = text.replace(quote(self.password, safe=""), "***")
        return text


def is_postgres_url(url: str) -> bool:
    return url.strip().split("://", 1)[0].lower() in SCHEMES and "://" in url


def parse_database_url(url: str, environ: Mapping[str, str]) -> DatabaseUrl:
    """Parse storage.url; the password comes from the URL or, when it has none, from
    ATOMIC_AGENT_STORAGE_PASSWORD. StorageUrlError (never echoing a password) when malformed."""
    scrubbed = _URL_PASSWORD.sub(r"\1***@", url)
    example = "postgresql://agent@127.0.0.1:5432/atomic_agent"
    try:
        parts = urlsplit(url.strip())
        port = parts.port or 5432
    except ValueError as exc:
        raise StorageUrlError(f"storage.url {scrubbed!r} is not a valid URL ({_URL_PASSWORD.sub(r'***', str(exc))});"
                              f" write it like {example}") from None
    if parts.scheme.lower() not in SCHEMES:
        raise StorageUrlError(f"storage.url {scrubbed!r} is not a PostgreSQL URL: it must start with postgresql:// "
                              f"(e.g. {example}); leave it empty to keep the embedded SQLite state")
    database = unquote(parts.path.lstrip("/"))
    if not parts.hostname or not parts.username or not database:
        missing = [name for name, value in (("a host", parts.hostname), ("a user", parts.username),
                                            ("a database name", database)) if not value]
        raise StorageUrlError(f"storage.url {scrubbed!r} lacks {', '.join(missing)}; write it like {example} and put "
                              f"the password in <state>/.env as {PASSWORD_ENV}=...")
    password = unquote(parts.password) if parts.password is not None else environ.get(PASSWORD_ENV) or None
    return DatabaseUrl(unquote(parts.username), parts.hostname, port, database, password)
