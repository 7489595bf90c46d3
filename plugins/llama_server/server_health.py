"""Asking a llama-server how it is: /health (503 while the model loads) and /props."""

from __future__ import annotations

from typing import Any

import attrs

HEALTH_OK = "ok"
HEALTH_LOADING = "loading"
HEALTH_UNREACHABLE = "unreachable"


@attrs.frozen
class HealthSnapshot:
    health: str  # ok | loading | unreachable | "http <code>"
    model: str | None = None  # /props model_alias
    model_path: str | None = None
    n_ctx: int | None = None  # per slot: -c divided by --parallel
    total_slots: int | None = None
    detail: str = ""
    build_info: str = ""  # /props build_info, e.g. "b7432-1a2b3c4"

    @property
    def healthy(self) -> bool:
        return self.health == HEALTH_OK


def check_health(base_url: str, timeout_s: float = 2.0) -> tuple[str, str]:
    """(health, detail) from GET /health."""
    import httpx

    try:
        resp = httpx.get(f"{base_url}/health", timeout=timeout_s)
    except httpx.HTTPError as exc:
        return HEALTH_UNREACHABLE, f"{type(exc).__name__}: {exc}"
    if resp.status_code == 200:
        return HEALTH_OK, ""
    if resp.status_code == 503:
        return HEALTH_LOADING, _error_message(resp)
    return f"http {resp.status_code}", _error_message(resp)


def probe_server(base_url: str, timeout_s: float = 5.0) -> HealthSnapshot:
    """Health plus, when healthy, what /props says about the model and the slots."""
    import httpx

    health, detail = check_health(base_url, timeout_s=min(timeout_s, 2.0))
    if health != HEALTH_OK:
        return HealthSnapshot(health=health, detail=detail)
    try:
        resp = httpx.get(f"{base_url}/props", timeout=timeout_s)
        props = resp.json() if resp.status_code == 200 else {}
    except (httpx.HTTPError, ValueError) as exc:
        return HealthSnapshot(health=health, detail=f"/props failed: {exc}")
    return snapshot_from_props(props if isinstance(props, dict) else {})


def snapshot_from_props(props: dict[str, Any]) -> HealthSnapshot:
    settings = props.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    if n_ctx is None:
        n_ctx = props.get("n_ctx")  # older servers put it at the root
    return HealthSnapshot(health=HEALTH_OK, model=_str_or_none(props.get("model_alias")),
                          model_path=_str_or_none(props.get("model_path")),
                          n_ctx=n_ctx if isinstance(n_ctx, int) else None,
                          total_slots=props.get("total_slots") if isinstance(props.get("total_slots"), int) else None,
                          build_info=str(props.get("build_info") or ""))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _error_message(resp: Any) -> str:
    try:
        body = resp.json()
        return str(body["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return resp.text[:200]
