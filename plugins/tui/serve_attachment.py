"""Where `atomic-agent tui --attach` finds a running `serve`, and the operator credential it
presents there.

serve keeps these files in `<state>/serve/` (its own plugin writes them; plugins do not import
one another, so the names are repeated here): `listening.json` ({pid, url}, present while it
accepts connections), `operator-token` (the operator's surface credential, sent as
`X-Atomic-Operator`) and `api-key` (its generated API key, sent as a bearer token; the
`serve.apiKeyEnv` variable, ATOMIC_AGENT_API_KEY by default, wins over the file). The
credentials are read from the files and sent only as headers: never printed or logged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs

SERVE_DIR = "serve"
ADDRESS_FILE = "listening.json"
OPERATOR_TOKEN_FILE = "operator-token"
API_KEY_FILE = "api-key"
DEFAULT_API_KEY_ENV = "ATOMIC_AGENT_API_KEY"
START_HINT = "start it with `atomic-agent serve` (in another terminal), or pass the address: tui --attach URL"


class AttachError(Exception):
    """The serve to attach to cannot be reached or refuses this surface; the message says what to do."""


@attrs.frozen
class ServeAttachment:
    url: str
    operator_token: str | None = attrs.field(default=None, repr=False)
    api_key: str | None = attrs.field(default=None, repr=False)

    @property
    def headers(self) -> dict[str, str]:
        headers = {}
        if self.operator_token:
            headers["X-Atomic-Operator"] = self.operator_token
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _secret(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def local_serve_url(state_dir: Path) -> str | None:
    """The URL of the serve of this state dir that is alive now, or None."""
    try:
        raw = json.loads((state_dir / SERVE_DIR / ADDRESS_FILE).read_text(encoding="utf-8"))
        pid, url = int(raw["pid"]), str(raw["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return url.rstrip("/") if _alive(pid) else None


def locate(state_dir: Path, url: str | None, api_key_env: str = DEFAULT_API_KEY_ENV) -> ServeAttachment:
    """The serve to attach to: `url` when given, else this state dir's running serve
    (AttachError when none runs), with the state dir's credentials."""
    if url:
        if not url.startswith(("http://", "https://")):
            raise AttachError(f"--attach takes an http:// or https:// address, got {url!r}")
        target = url.rstrip("/")
    else:
        found = local_serve_url(state_dir)
        if found is None:
            raise AttachError(f"no `atomic-agent serve` is running for the state dir {state_dir}; {START_HINT}")
        target = found
    api_key = os.environ.get(api_key_env) or _secret(state_dir / SERVE_DIR / API_KEY_FILE)
    token_path = state_dir / SERVE_DIR / OPERATOR_TOKEN_FILE
    token = _secret(token_path)
    if token is None and api_key is None:
        raise AttachError(f"no operator token at {token_path} (serve writes it when it first starts): attach with "
                          "the state dir that serve runs on (--state-dir), or start serve once to create it; without "
                          "it the TUI would see none of the sessions other channels run")
    return ServeAttachment(target, token, api_key)


def refusal(status: int, body: Any) -> str:
    """The words for a refused request: serve's own message, and what to do for 401/403."""
    message = ""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = str(body["error"].get("message") or "")
    if status in (401, 403):
        return (f"serve refused this surface ({status}: {message or 'not allowed'}); the TUI presents "
                f"<state>/serve/{OPERATOR_TOKEN_FILE} (and the API key when serve has one): attach with the state "
                "dir the serve runs on (--state-dir), or restart serve so it rewrites the token")
    return f"serve answered {status}: {message or 'no details'}"


async def probe(attachment: ServeAttachment, timeout_s: float = 5.0) -> None:
    """One request before the screen is taken: AttachError when serve is down or refuses."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.get(attachment.url + "/api/approvals", headers=attachment.headers)
    except httpx.HTTPError as exc:
        raise AttachError(f"cannot reach serve at {attachment.url} ({type(exc).__name__}); {START_HINT}") from None
    if response.status_code != 200:
        try:
            body = response.json()
        except ValueError:
            body = None
        raise AttachError(refusal(response.status_code, body))
